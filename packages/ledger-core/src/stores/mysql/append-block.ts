import { type HeadAppend, inLockOrder } from "../sql/head-cache.js";
import { ROWS_PER_STATEMENT } from "../sql/shared-queries.js";
import type { MysqlBackendState } from "./backend-state.js";
import { isCommonShape } from "./block-shape.js";
import { claimsStatement } from "./block-statements.js";
import { carriedBlobs } from "./carried-blobs.js";
import { bodyCharsPerStatement } from "./packet-limits.js";
import { runBlock } from "./run-block.js";
import { canRunBlocks, packetLimit } from "./server-limits.js";

/** `MysqlBackend.appendAtHeads` (its comment says what the block does, and why). */
export async function appendBatch(
  state: MysqlBackendState,
  appends: HeadAppend[],
): Promise<(number | undefined)[]> {
  // Known since init; asked only by a store used without it.
  if (!(state.blocks ?? (await canRunBlocks(state)))) return appends.map(() => undefined);
  // Known since init, read without an await (this runs on every recorded call).
  const maxPacket = state.maxPacket ?? (await packetLimit(state));
  const part = statementPart(appends, bodyCharsPerStatement(maxPacket));
  const lasts: (number | undefined)[] = appends.map(() => undefined);
  if (part.length === 0) return lasts;
  const written = await appendBlock(
    state,
    part.map(({ append }) => append),
  );
  part.forEach(({ index }, i) => {
    lasts[index] = written[i];
  });
  return lasts;
}

/** The appends of `statementPart` in one compound block: the last cursor of each, or undefined. */
async function appendBlock(
  state: MysqlBackendState,
  appends: HeadAppend[],
): Promise<(number | undefined)[]> {
  const prefix = state.tablePrefix;
  const order = inLockOrder(appends);
  const values: (string | number | Buffer | null)[] = [];
  const moveRuns = order.map(({ append }, i) => {
    values.push(
      append.length,
      append.status,
      append.lastHash,
      append.sessionId,
      append.runId,
      append.expected.length,
      append.expected.lastHash,
    );
    return `UPDATE ${prefix}runs SET run_length = ?, status = ?, last_hash = ?
    WHERE session_id = ? AND run_id = ? AND run_length = ? AND last_hash <=> ?
      AND status = 'running';
  SET m${i} = ROW_COUNT();`;
  });
  const counters = sessionGroups(order.map(({ append }) => append)).map((group) => {
    const first = group[0] as { append: HeadAppend; i: number };
    values.push(first.append.now, first.append.sessionId);
    const inserts = group.map(({ append, i }) => {
      for (const event of append.events) {
        values.push(
          append.sessionId,
          append.runId,
          event.seq,
          event.eventId,
          event.eventType,
          event.recordedAt,
          event.bodyPrefix,
        );
      }
      const rows = append.events
        .map((_, k) => `(?, c + ${k + 1}, ?, ?, ?, ?, ?, CONCAT(?, c + ${k + 1}, '}'))`)
        .join(", ");
      // The blobs the batch names, indexed for its session (in code-point order: refs);
      // an append that carries blobs has them indexed after the block stores them (below).
      let indexRefs = "";
      if (append.refs.length > 0 && append.blobs.length === 0) {
        values.push(append.sessionId, JSON.stringify(append.refs));
        indexRefs = `\n      ${claimsStatement(prefix)}`;
      }
      return `IF m${i} = 1 THEN
      INSERT INTO ${prefix}events
        (session_id, commit_cursor, run_id, seq, event_id, event_type, recorded_at, body)
        VALUES ${rows};${indexRefs}
      SET c = c + ${append.events.length};
      SET l${i} = c;
    END IF;`;
    });
    const total = group.map(({ append, i }) => `m${i} * ${append.events.length}`).join(" + ");
    // A counter row missing (never made by the store) fails the batch as a deadlock would:
    // the store then writes each append on its own, and the transactional path answers.
    return `SET t = ${total};
  IF t > 0 THEN
    UPDATE ${prefix}sessions
      SET last_cursor = (@agent_ledger_cursor := last_cursor + t), updated_at = ?
      WHERE session_id = ?;
    IF ROW_COUNT() = 0 THEN
      SIGNAL SQLSTATE '40001' SET MYSQL_ERRNO = 1213, MESSAGE_TEXT = 'session counter row missing';
    END IF;
    SET c = @agent_ledger_cursor - t;
    ${inserts.join("\n    ")}
  END IF;`;
  });
  const carried = carriedBlobs(prefix, order, values);
  const statement = `BEGIN NOT ATOMIC
  DECLARE c BIGINT UNSIGNED;
  DECLARE t BIGINT UNSIGNED;
  ${order.map((_, i) => `DECLARE m${i} INT DEFAULT 0; DECLARE l${i} BIGINT UNSIGNED DEFAULT NULL;`).join("\n  ")}
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
  START TRANSACTION;
  ${moveRuns.join("\n  ")}
  ${counters.join("\n  ")}${carried}
  COMMIT;
  SELECT ${order.map((_, i) => `l${i}`).join(", ")};
END`;
  const row = await runBlock(state, statement, values, isCommonShape(appends));
  const lasts: (number | undefined)[] = appends.map(() => undefined);
  order.forEach(({ index }, i) => {
    const last = row?.[`l${i}`];
    if (last != null) lasts[index] = Number(last);
  });
  return lasts;
}

/**
 * Appends sorted by (session, run), cut into runs of one session each, every append with its
 * index in that order (the statement's variable names).
 */
function sessionGroups(sorted: HeadAppend[]): { append: HeadAppend; i: number }[][] {
  const groups: { append: HeadAppend; i: number }[][] = [];
  sorted.forEach((append, i) => {
    const last = groups[groups.length - 1];
    if (last !== undefined && last[0]?.append.sessionId === append.sessionId)
      last.push({ append, i });
    else groups.push([{ append, i }]);
  });
  return groups;
}

/**
 * The appends of a batch that go into its one statement, each with its index in the batch: in
 * order, as long as they hold at most ROWS_PER_STATEMENT events and `bodyChars` characters of
 * event bodies (and blob refs) together. The others stay unanswered (undefined), and the store
 * writes each with the transactional program, in bounded INSERTs: a block binds 7 values per
 * event, and MariaDB refuses a prepared statement with more than 65,535 placeholders ("too many
 * placeholders", for one append of about 9,400 events), or longer than max_allowed_packet.
 */
function statementPart(
  appends: HeadAppend[],
  bodyChars: number,
): { append: HeadAppend; index: number }[] {
  const part: { append: HeadAppend; index: number }[] = [];
  let events = 0;
  let chars = 0;
  for (const [index, append] of appends.entries()) {
    let size = 0;
    for (const event of append.events) size += event.bodyPrefix.length;
    // The refs travel again, as the JSON array the statement indexes them from.
    for (const ref of append.refs) size += ref.length + 3;
    // Blobs travel as binary values: a byte each, where a character counts up to six.
    for (const blob of append.blobs) size += Math.ceil(blob.stored.byteLength / 6);
    if (events + append.events.length > ROWS_PER_STATEMENT || chars + size > bodyChars) break;
    part.push({ append, index });
    events += append.events.length;
    chars += size;
  }
  return part;
}
