export default async function globalTeardown(): Promise<void> {
  const services = (globalThis as { __ratingServices?: { stop(): Promise<void> } }).__ratingServices;
  await services?.stop();
}
