export const routingTypeDefs = /* GraphQL */ `
  extend type Query {
    """
    Carriers a call to destination would go out on now, best first, as PROTOCOL:host:port: the active
    carriers rated at the longest matching prefix in pricelist_tags, cheapest first, carrier_tags moved
    to the front, only carrier_tags_override when given. Empty when the destination is unreachable.
    """
    leastCostRouting(destination: String, pricelist_tags: [String!], carrier_tags: [String!], carrier_tags_override: [String!]): [String!]
  }
`;
