/** Errors after which the connection is still usable (the statement or transaction failed). */
export const statementErrnos = new Set([1062, 1213, 1205, 1406, 1264, 1366]);
