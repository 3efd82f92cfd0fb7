import type { JsonValue } from '../model/content.js';
import type { ToolDefinition } from '../model/model.js';

/**
 * The text OpenAI puts in the prompt for function tools: not their JSON Schema but TypeScript-like
 * declarations in a `functions` namespace. Reverse-engineered by openai-chat-tokens (hmarr) from
 * counts the Chat Completions API reported; its test counts are the fixtures this is checked against
 * (test/fixtures/tokenizers/openai-chat-tokens). Schema keywords it does not render (`$ref`,
 * `oneOf`, formats, bounds) cost nothing here, so a schema that leans on them is undercounted.
 */
export function formatOpenAIFunctionDefinitions(tools: readonly ToolDefinition[]): string {
  const lines = ['namespace functions {', ''];
  for (const tool of tools) {
    if (tool.description) lines.push(`// ${tool.description}`);
    const schema = tool.inputSchema;
    if (Object.keys(propertiesOf(schema)).length > 0) {
      lines.push(`type ${tool.name} = (_: {`);
      lines.push(formatProperties(schema, 0));
      lines.push('}) => any;');
    } else lines.push(`type ${tool.name} = () => any;`);
    lines.push('');
  }
  lines.push('} // namespace functions');
  return lines.join('\n');
}

type Schema = { [key: string]: JsonValue };

const isSchema = (value: JsonValue | undefined): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function propertiesOf(schema: Schema): { [key: string]: JsonValue } {
  const properties = schema['properties'];
  return isSchema(properties) ? properties : {};
}

/** An object's properties, one per line, without the braces around them. */
function formatProperties(schema: Schema, indent: number): string {
  const required = Array.isArray(schema['required']) ? schema['required'] : [];
  const lines: string[] = [];
  for (const [name, value] of Object.entries(propertiesOf(schema))) {
    const property = isSchema(value) ? value : {};
    // Only the top level's descriptions reach the prompt, as the recorded counts show.
    if (typeof property['description'] === 'string' && property['description'] !== '' && indent < 2)
      lines.push(`// ${property['description']}`);
    lines.push(`${name}${required.includes(name) ? '' : '?'}: ${formatType(property, indent)},`);
  }
  const padding = ' '.repeat(indent);
  return lines.map((line) => padding + line).join('\n');
}

function formatType(schema: Schema, indent: number): string {
  const anyOf = schema['anyOf'];
  if (Array.isArray(anyOf))
    return anyOf.map((option) => formatType(isSchema(option) ? option : {}, indent)).join(' | ');
  const values = Array.isArray(schema['enum']) ? schema['enum'] : undefined;
  switch (schema['type']) {
    case 'string':
      return values ? values.map((value) => `"${String(value)}"`).join(' | ') : 'string';
    case 'number':
    case 'integer':
      return values ? values.map((value) => String(value)).join(' | ') : 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'object':
      return ['{', formatProperties(schema, indent + 2), '}'].join('\n');
    case 'array': {
      const items = schema['items'];
      return isSchema(items) ? `${formatType(items, indent)}[]` : 'any[]';
    }
    default:
      return 'any';
  }
}
