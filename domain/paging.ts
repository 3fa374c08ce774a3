/** Pages count from 1 (the real registry's interface): the rows a page skips. */
export function pageOffset(paging: { page: number; pageSize: number }): number {
  return (paging.page - 1) * paging.pageSize;
}
