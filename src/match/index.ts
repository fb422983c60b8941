export {
  compileLabelSelector,
  matchesLabels,
  type InvalidSelectorError,
  type LabelMatcher,
  type Labels,
  type SelectorProblem,
} from "./selector.ts";
export {
  describeTarget,
  isNamespaceResource,
  requestTarget,
  ruleMatches,
  ruleMismatch,
  type RuleMismatch,
  type RuleTarget,
} from "./rules.ts";
export {
  isAdmissionConfigurationResource,
  matchesResources,
  objectLabels,
  PreparedMatch,
  type MatchContext,
  type MatchErrorKind,
  type MatchOutcome,
  type Unselected,
} from "./matcher.ts";
export { type IndexEntry, PolicyIndex } from "./policy-index.ts";
