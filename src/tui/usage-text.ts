// The lane list's and the header's words for what the agents reported they spent
// (components/ import only src/tui: the core's formatting, passed on).
export { formatTokens, formatUsage, tokensOf } from '../core/records/usage.js';
