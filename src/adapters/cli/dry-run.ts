/**
 * The options `celgate eval` and `celgate audit` share, checked alike: both dry-run policies against
 * objects, in a format of the command's choice, with CEL extras and the user of the requests built.
 */
import type { CelExtras } from "../../cel/index.ts";
import { DEFAULT_USER, type UserInfo } from "../../request/types.ts";
import { err, ok, type Result } from "../../result.ts";
import { splitList } from "./args.ts";
import { parseExtras } from "./expression.ts";

/** The parsed values of the shared options, as both commands' option tables declare them. */
export interface DryRunValues {
  readonly output: string;
  readonly policy?: readonly string[] | undefined;
  readonly "cel-extras"?: string | undefined;
  readonly user?: string | undefined;
  readonly groups?: string | undefined;
}

/**
 * The checks both commands start with, in this order: `-o/--output` is one of the command's formats
 * (`expected` names them in the message), then `-p/--policy` is given.
 */
export function outputAndPolicies<O extends string>(
  values: DryRunValues,
  outputs: readonly O[],
  expected: string,
): Result<{ readonly output: O; readonly policyPaths: readonly string[] }, string> {
  const output = values.output as O;
  if (!outputs.includes(output)) return err(`unknown output format '${output}'; expected ${expected}`);
  const policyPaths = values.policy ?? [];
  if (policyPaths.length === 0) return err("missing -p/--policy");
  return ok({ output, policyPaths });
}

/** `--cel-extras` parsed, and the user of the requests built: `--user` and `--groups`, or celgate's default. */
export function extrasAndUser(
  values: DryRunValues,
): Result<{ readonly extras: CelExtras; readonly userInfo: UserInfo }, string> {
  let extras: CelExtras = {};
  if (values["cel-extras"] !== undefined) {
    const e = parseExtras(values["cel-extras"]);
    if (!e.ok) return e;
    extras = e.value;
  }
  const userInfo: UserInfo = {
    username: values.user ?? DEFAULT_USER.username,
    groups: values.groups !== undefined ? splitList(values.groups) : [...DEFAULT_USER.groups],
  };
  return ok({ extras, userInfo });
}
