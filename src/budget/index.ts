export { type BudgetedModelOptions, budgetedModel } from './budgeted-model.js';
export { failedCallCharge } from './failed-call-charge.js';
export {
  isJobBudgetExceeded,
  JobBudget,
  type JobBudgetExceeded,
  JobBudgetExceededError,
  type JobBudgetName,
  type JobBudgetOptions,
  type JobSettlement,
  type JobSpend,
  type Reservation,
  type ReserveRequest,
  type ReserveResult,
} from './job-budget.js';
