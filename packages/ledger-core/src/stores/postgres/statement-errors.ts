/** SQLSTATE classes after which the connection is still usable: the statement just failed. */
export const statementErrors = /^(23|40|22|42|26)/;

/**
 * invalid_sql_statement_name and duplicate_prepared_statement: what a named statement gets
 * through a pooler in transaction mode (see autocommit).
 */
export const statementNameErrors: ReadonlySet<string> = new Set(["26000", "42P05"]);
