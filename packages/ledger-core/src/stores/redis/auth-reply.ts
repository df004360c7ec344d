/** Commands whose arguments carry the URL's password (HELLO: `AUTH <user> <password>`). */
const CREDENTIAL_COMMANDS = new Set(["auth", "hello"]);

/**
 * `error` with the arguments of the command it answers shown as `***` when that command carries
 * credentials: ioredis gives the server's refusal of AUTH (WRONGPASS) the command as sent,
 * password included, and the store keeps that refusal as the `cause` of its error, which
 * `console.error(error)` prints whole.
 */
export function withoutCredentials(error: Error): Error {
  const command = (error as { command?: { name?: unknown; args?: unknown } }).command;
  if (typeof command?.name !== "string" || !CREDENTIAL_COMMANDS.has(command.name.toLowerCase()))
    return error;
  const args = Array.isArray(command.args) ? command.args.map(() => "***") : [];
  Object.defineProperty(error, "command", {
    value: { ...command, args },
    enumerable: true,
    configurable: true,
    writable: true,
  });
  return error;
}
