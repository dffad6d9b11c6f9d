// Imported first wherever the TUI is loaded: React and its reconciler pick their build from
// NODE_ENV when they are first loaded, and the development build (prop checks, render
// logging, fiber bookkeeping) costs several times as much per frame. A user who sets
// NODE_ENV (to debug the TUI) keeps theirs.
process.env.NODE_ENV ??= 'production';
