/** A span as the tree helper needs it: the SDK's ReadableSpan and a decoded OTLP span both fit. */
export interface TreeSpan {
  name: string;
  spanId: string;
  parentSpanId: string | undefined;
  /** Start time in nanoseconds, to order siblings. */
  startNs: bigint;
}

/** The nested names of a set of spans, siblings in start order (ties in the order given). */
export interface SpanNode {
  name: string;
  children: SpanNode[];
}

export function treeOf(spans: readonly TreeSpan[]): SpanNode[] {
  const ids = new Set(spans.map((span) => span.spanId));
  const build = (parent: string | undefined): SpanNode[] =>
    spans
      .map((span, index) => ({ span, index }))
      .filter(({ span }) =>
        parent === undefined
          ? span.parentSpanId === undefined || !ids.has(span.parentSpanId)
          : span.parentSpanId === parent,
      )
      .sort((a, b) =>
        a.span.startNs === b.span.startNs ? a.index - b.index : a.span.startNs < b.span.startNs ? -1 : 1,
      )
      .map(({ span }) => ({ name: span.name, children: build(span.spanId) }));
  return build(undefined);
}

/** {@link treeOf} for the SDK's finished spans. */
export function spanTree(
  spans: readonly {
    name: string;
    spanContext(): { spanId: string };
    parentSpanContext?: { spanId: string } | undefined;
    startTime: [number, number];
  }[],
): SpanNode[] {
  return treeOf(
    spans.map((span) => ({
      name: span.name,
      spanId: span.spanContext().spanId,
      parentSpanId: span.parentSpanContext?.spanId,
      startNs: BigInt(span.startTime[0]) * 1_000_000_000n + BigInt(span.startTime[1]),
    })),
  );
}
