export const viewerTypeDefs = /* GraphQL */ `
  "Who is asking: the principal of the request's token."
  type Viewer {
    "The token's name; 'anonymous' in a development setup without tokens."
    name: String!
    "Scopes of the token (read, write, agent), in that order; a development setup without tokens has all of them."
    scopes: [String!]!
  }

  extend type Query {
    "The principal of this request, so a console can hide what its token may not do (edits need write)."
    viewer: Viewer!
  }
`;
