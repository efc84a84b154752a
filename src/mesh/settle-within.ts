/** Waits for every promise to settle, or until `ms` passes, whichever is first. Never throws. */
export async function settleWithin(
  promises: readonly Promise<unknown>[],
  ms: number,
): Promise<void> {
  if (promises.length === 0) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.allSettled(promises),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]);
  clearTimeout(timer);
}
