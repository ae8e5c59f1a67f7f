/**
 * The emulator's SQL front end: parse, type and compile GoogleSQL and PostgreSQL to SQLite. Its only door: code
 * outside this folder imports from here. Inside it, the compiler's files (compile-expr, compile-ops,
 * compile-composite, compile-query, functions) and the parser's (parse-expr, parse-query) import each other:
 * that is the grammar's own recursion (an expression holds a subquery, a subquery holds expressions), the one
 * import cycle the structure check allows (test/structure/import-graph.ts, GRAMMAR_FOLDERS).
 */

export { type CompiledStatement, compileRowCondition, compileRowValue, compileStatement } from './compile';
export { compileDml, type DmlPlan } from './compile-dml';
export { rootPartitionTable } from './partitionable';
export { registerSqlRuntime } from './runtime';
