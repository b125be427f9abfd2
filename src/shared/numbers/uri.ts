/**
 * Numbers as SIP proxies send them (DESIGN.md section 4): plain numbers, `sip:`/`sips:`/`tel:` URIs,
 * name-addr forms with display names and `<>`. The one place they are taken apart.
 * STUB: to be implemented (issue 11); the signatures are the contract other modules rely on.
 */

/** The user part of a SIP/SIPS/TEL URI (any accepted form), or null when `raw` is not such a URI. */
export function uriUserPart(raw: string): string | null {
  void raw;
  return null;
}

/**
 * The number rating matches prefixes on: the user part of a URI (or the whole plain number), without
 * a leading `+` and without visual separators. Total: never throws; may return ''.
 */
export function ratingNumber(raw: string): string {
  return raw;
}
