import { listArgs } from '../common/schema';

export const importTypeDefs = /* GraphQL */ `
  "A file of call detail records uploaded with POST /v1/imports (docs/IMPORTS.md), and its progress."
  type Import {
    "Hash of the file's content and format: the same file uploaded again is the same import."
    id: ID!
    "The file's name as uploaded (name=)."
    name: String
    "running, done or failed (a failed or interrupted import resumes when the same file is uploaded again)."
    state: String!
    "Lines read so far (all of them once done)."
    lines: Int!
    "Lines whose outcome is known: rejected, rated or duplicate."
    done: Int!
    "Lines that passed validation and were sent to the workers."
    accepted: Int!
    "Lines recorded: rated by this run or already recorded by an earlier one (recorded + rejected = done)."
    recorded: Int!
    "Lines that failed validation or that a worker refused."
    rejected: Int!
    created_at: DateTime
    "When the last run started (an upload of the same file starts a new run)."
    started_at: DateTime
    finished_at: DateTime
    "Why the last run failed."
    error: String
    "Rejected lines in line order (the first 10,000 are kept); limit 1 to 10000."
    rejects(limit: Int = 100): [ImportReject!]!
  }

  type ImportReject {
    line: Int!
    "BAD_USER_INPUT: <field>: ..., or the refusal (NOT_FOUND, NOT_ACTIVE, UNREACHABLE_DESTINATION)."
    reason: String!
    "The account a refusal names."
    account_tag: String
  }

  input ImportFilter {
    id: ID
    ids: [ID!]
    "running, done or failed"
    state: String
    "Search box: a case-insensitive substring (taken literally, at most 100 characters) of name"
    q: String
  }

  extend type Query {
    "One uploaded import by id; null when there is none."
    Import(id: ID!): Import
    allImports(${listArgs('ImportFilter')}): [Import!]
    _allImportsMeta(${listArgs('ImportFilter')}): ListMetadata
  }
`;
