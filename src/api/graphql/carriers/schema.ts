import { listArgs } from '../common/schema';

const writableArgs = 'id: ID, carrier_tag: String, host: String, port: Int, protocol: CarrierProtocol, active: Boolean';

export const carrierTypeDefs = /* GraphQL */ `
  enum CarrierProtocol {
    TCP
    UDP
  }

  "An exit destination of calls: a host, a port and a protocol."
  type Carrier {
    id: ID!
    carrier_tag: String!
    "Hostname or IP address"
    host: String!
    port: Int!
    protocol: CarrierProtocol!
    "Disabled carriers are left out of routing."
    active: Boolean!
  }

  input CarrierFilter {
    id: ID
    ids: [ID!]
    "One tag or a list of tags"
    carrier_tag: [String!]
    host: String
    protocol: CarrierProtocol
    active: Boolean
    "Search box: a case-insensitive substring (taken literally, at most 100 characters) of carrier_tag or host"
    q: String
  }

  extend type Query {
    "One carrier by id or carrier_tag; null when there is none."
    Carrier(id: ID, carrier_tag: String): Carrier
    allCarriers(${listArgs('CarrierFilter')}): [Carrier!]
    _allCarriersMeta(${listArgs('CarrierFilter')}): ListMetadata
  }

  extend type Mutation {
    "carrier_tag, host and port are required; protocol defaults to UDP, active to true, id to a new uuid4."
    createCarrier(${writableArgs}): Carrier
    "Names the carrier by id (then carrier_tag renames it) or by carrier_tag. Omitted arguments are left unchanged."
    updateCarrier(${writableArgs}): Carrier
    "Refused (INVALID_REFERENCE) while rates or accounts use the carrier. Returns the deleted carrier."
    deleteCarrier(id: ID, carrier_tag: String): Carrier
  }
`;
