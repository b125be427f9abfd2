import { badInputReason } from '../../calls/reasons';
import { parseMapping, type Mapping } from './mapping';

/**
 * The named formats of `rating import --format NAME`: mappings in the form of a `--map` file
 * (src/shared/domain/imports/cdr/mapping.ts), written from each project's documentation and source, as
 * docs/IMPORTS.md ("Switch formats") describes them. An operator whose switch writes something else
 * copies one into a file and changes it.
 */

/** Asterisk cdr_csv (Master.csv): 16 columns, then uniqueid and userfield, then peeraccount, linkedid, sequence, as cdr_csv.conf says. */
const ASTERISK_BASE = [
  'accountcode',
  'src',
  'dst',
  'dcontext',
  'clid',
  'channel',
  'dstchannel',
  'lastapp',
  'lastdata',
  'start',
  'answer',
  'end',
  'duration',
  'billsec',
  'disposition',
  'amaflags',
];
const ASTERISK_NEW = ['peeraccount', 'linkedid', 'sequence'];

const KAMAILIO_ACC_CORE = ['method', 'from_tag', 'to_tag', 'callid', 'sip_code', 'sip_reason', 'time'];

export const BUILTIN_FORMATS = {
  asterisk: {
    name: 'asterisk',
    dialect: 'csv',
    header: 'auto',
    // uniqueid is the call's own id: loguniqueid=yes. 17 cells are taken as uniqueid without userfield
    // (builtinMapping checks that the cell looks like one).
    columns: [
      [...ASTERISK_BASE, 'uniqueid'],
      [...ASTERISK_BASE, 'uniqueid', 'userfield'],
      [...ASTERISK_BASE, 'uniqueid', ...ASTERISK_NEW],
      [...ASTERISK_BASE, 'uniqueid', 'userfield', ...ASTERISK_NEW],
    ],
    fields: {
      transaction_tag: 'uniqueid',
      account_tag: 'accountcode',
      source: 'src',
      destination: 'dst',
      start: 'start',
      answer: 'answer',
      end: 'end',
      billsec: 'billsec',
    },
    time: { format: 'datetime' },
    answered: { column: 'disposition', equals: ['ANSWERED'] },
    note: 'Asterisk rows need the uniqueid column: set loguniqueid=yes in cdr_csv.conf (or [csv] in cdr.conf), or describe the layout with --map',
  },
  freeswitch: {
    name: 'freeswitch',
    dialect: 'csv',
    header: 'auto',
    // mod_cdr_csv's `example` template.
    columns: [
      'caller_id_name',
      'caller_id_number',
      'destination_number',
      'context',
      'start_stamp',
      'answer_stamp',
      'end_stamp',
      'duration',
      'billsec',
      'hangup_cause',
      'uuid',
      'bleg_uuid',
      'accountcode',
      'read_codec',
      'write_codec',
    ],
    fields: {
      transaction_tag: 'uuid',
      account_tag: 'accountcode',
      source: 'caller_id_number',
      destination: 'destination_number',
      start: 'start_stamp',
      answer: 'answer_stamp',
      end: 'end_stamp',
      billsec: 'billsec',
    },
    time: { format: 'datetime' },
    answered: { column: 'answer_stamp', notEmpty: true },
    note: "FreeSWITCH templates are the operator's own: describe another template with --map (docs/IMPORTS.md)",
  },
  'kamailio-acc': {
    name: 'kamailio-acc',
    dialect: 'db',
    header: 'auto',
    // The acc table's columns, then the db_extra of Kamailio's own kamailio.cfg (WITH_ACCDB).
    columns: [...KAMAILIO_ACC_CORE, 'src_user', 'src_domain', 'src_ip', 'dst_ouser', 'dst_user', 'dst_domain'],
    fields: {
      transaction_tag: 'callid',
      account_tag: 'src_user',
      source: 'src_user',
      destination: 'dst_user',
      source_ip: 'src_ip',
      answer: 'time',
      end: 'time',
    },
    time: { format: 'epoch' },
    answered: { column: 'sip_code', prefix: '2' },
    pairs: { method: 'method', callid: 'callid', from_tag: 'from_tag', to_tag: 'to_tag', begin: 'INVITE', end: 'BYE' },
    note: 'kamailio-acc reads db_flatstore or db_text files of the acc table with the db_extra "src_user=$fU;src_domain=$fd;src_ip=$si;dst_ouser=$tU;dst_user=$rU;dst_domain=$rd"; describe other extras with --map',
  },
  'kamailio-cdrs': {
    name: 'kamailio-cdrs',
    dialect: 'db',
    header: 'auto',
    // acc_cdrs (dialog-based, cdr_start_on_confirmed=1), then the cdr_extra docs/IMPORTS.md gives.
    columns: ['start_time', 'end_time', 'duration', 'callid', 'src_user', 'dst_user'],
    fields: {
      transaction_tag: 'callid',
      account_tag: 'src_user',
      source: 'src_user',
      destination: 'dst_user',
      answer: 'start_time',
      billsec: 'duration',
    },
    time: { format: 'epoch' },
    // A dialog that failed is written with duration 0 (cdr_on_failed).
    answered: { column: 'duration', above: 0 },
    note: 'kamailio-cdrs reads acc_cdrs written with cdr_start_on_confirmed=1 and the cdr_extra "callid=$dlg(callid);src_user=$dlg_var(src_user);dst_user=$dlg_var(dst_user)"; describe other extras with --map',
  },
  'opensips-acc': {
    name: 'opensips-acc',
    dialect: 'db',
    header: 'auto',
    // db_flatstore writes the core, time, the extras, then with the cdr flag setuptime, created,
    // duration and ms_duration (a failed call: setuptime and created only); without it, rows are per
    // transaction and are paired (acc.c, acc_db_request and acc_db_cdrs).
    columns: [
      [...KAMAILIO_ACC_CORE, 'src_user', 'dst_user', 'setuptime', 'created', 'duration', 'ms_duration'],
      [...KAMAILIO_ACC_CORE, 'src_user', 'dst_user', 'setuptime', 'created'],
      [...KAMAILIO_ACC_CORE, 'src_user', 'dst_user'],
    ],
    fields: {
      transaction_tag: 'callid',
      account_tag: 'src_user',
      source: 'src_user',
      destination: 'dst_user',
      start: 'created',
      answer: 'time',
      end: 'time',
      billmsec: 'ms_duration',
    },
    time: { format: 'epoch' },
    answered: { column: 'sip_code', prefix: '2' },
    pairs: { method: 'method', callid: 'callid', from_tag: 'from_tag', to_tag: 'to_tag', begin: 'INVITE', end: 'BYE' },
    note: 'opensips-acc reads db_flatstore or db_text files of the acc table (version 7) with the extra_fields "db: src_user; dst_user"; describe other extras with --map',
  },
} as const;

export type BuiltinFormat = keyof typeof BUILTIN_FORMATS;
export const BUILTIN_FORMAT_NAMES = Object.keys(BUILTIN_FORMATS) as BuiltinFormat[];

export function isBuiltinFormat(name: string): name is BuiltinFormat {
  return Object.hasOwn(BUILTIN_FORMATS, name);
}

/** An Asterisk uniqueid: epoch.sequence, after `systemname-` when cdr.conf sets one. */
const UNIQUEID = /^(\S+-)?\d+\.\d+$/;

/**
 * Asterisk rows of 17 and 20 cells are read with uniqueid and without userfield, but loguniqueid=no with
 * loguserfield=yes writes the same number of cells, the userfield in that place. Taken as the
 * transaction tag, a userfield ("vip", "") makes different calls one: the later ones counted as
 * duplicates, never charged. So there the cell must look like a uniqueid; rows of 18 and 21 cells have
 * both columns and are not doubted.
 */
function asteriskRow(cells: readonly string[]): string | null {
  if ((cells.length !== 17 && cells.length !== 20) || UNIQUEID.test(cells[16].trim())) return null;
  return badInputReason(
    'transaction_tag (column uniqueid): not an Asterisk uniqueid (epoch.sequence, or systemname-epoch.sequence): with loguniqueid=no and loguserfield=yes this column is the userfield; describe that cdr.conf layout with --map',
  );
}

/** A named format's mapping, read as a `--map` file is (with its own row check, which a file cannot hold). */
export function builtinMapping(name: BuiltinFormat): Mapping {
  const mapping = parseMapping(JSON.parse(JSON.stringify(BUILTIN_FORMATS[name])));
  if (name === 'asterisk') mapping.rowCheck = asteriskRow;
  return mapping;
}
