import { listArgs } from '../common/schema';

const writableArgs = 'id: ID, date: String, name: String';

export const holidayTypeDefs = /* GraphQL */ `
  "A date of the holiday calendar: rates whose timing says holidays only (or exclude) read it, on their pricelist's clock."
  type Holiday {
    id: ID!
    "A local date YYYY-MM-DD"
    date: String!
    name: String
  }

  input HolidayFilter {
    id: ID
    ids: [ID!]
    "One date or a list of dates"
    date: [String!]
    "Dates from this one on (inclusive)"
    date_gte: String
    "Search box: a case-insensitive substring of the name or the date"
    q: String
  }

  extend type Query {
    "One holiday by id or date; null when there is none."
    Holiday(id: ID, date: String): Holiday
    allHolidays(${listArgs('HolidayFilter')}): [Holiday!]
    _allHolidaysMeta(${listArgs('HolidayFilter')}): ListMetadata
  }

  extend type Mutation {
    "date is required (unique); id defaults to a new uuid4."
    createHoliday(${writableArgs}): Holiday
    "Names the holiday by id (then date moves it) or by date."
    updateHoliday(${writableArgs}): Holiday
    "Returns the deleted holiday."
    deleteHoliday(id: ID, date: String): Holiday
  }
`;
