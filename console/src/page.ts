// What each console page provides to the shell (main.ts).
export interface Page {
  el: HTMLElement;
  /** Called on a timer while the page is shown: fetch and redraw without reloading. */
  refresh?(): Promise<void>;
  /** How often refresh runs (default 2 s). */
  refreshMs?: number;
  dispose?(): void;
}

export interface PageContext {
  /** The page's parameters, from the part of the URL hash after '?'. */
  params: URLSearchParams;
  /** Records the page's parameters in the URL (a link reopens the same view) without reloading. */
  setParams(params: Record<string, string>): void;
}

export type PageFactory = (ctx: PageContext) => Page;
