/** Where an account's alerts go: the account fields of the spec, copied into the alert when raised. */
export interface AlertRecipient {
  account_tag: string;
  notification_email: string | null;
  notification_mobile: string | null;
}

export function recipientOf(account: AlertRecipient): { email: string | null; mobile: string | null } {
  const clean = (value: string | null | undefined) => (value && value.trim() !== '' ? value.trim() : null);
  return { email: clean(account.notification_email), mobile: clean(account.notification_mobile) };
}
