import { badInput } from '../../../shared/infra/errors';
import { selectionProblem, type RerateSelection } from '../../../shared/domain/rerating';
import { optionalArg, requiredArg, type Args } from '../common/input';
import { sortableFields } from '../common/listing';
import { dateTime, intBetween, prefix, tag, tagList } from '../common/validate';

export const reratingSortable = sortableFields(['created_at', 'updated_at', 'state']);

/** A rerating's selection from arguments: checked, every problem naming its field. */
export function readSelection(args: Args): RerateSelection {
  const selection: RerateSelection = {
    from: requiredArg(args, 'from', dateTime),
    to: requiredArg(args, 'to', dateTime),
    account_tags: optionalArg(args, 'account_tags', tagList) ?? null,
    pricelist_tag: optionalArg(args, 'pricelist_tag', tag) ?? null,
    carrier_tag: optionalArg(args, 'carrier_tag', tag) ?? null,
    prefix: optionalArg(args, 'prefix', prefix) ?? null,
  };
  const problem = selectionProblem(selection);
  if (problem) throw badInput(problem.slice(0, problem.indexOf(':')), problem.slice(problem.indexOf(':') + 1).trim());
  return selection;
}

export function readSample(args: Args): number {
  return optionalArg(args, 'sample', intBetween(0, 100)) ?? 10;
}
