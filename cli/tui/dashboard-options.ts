/** What starts a terminal dashboard; shared by run-dashboard.ts (the lazy loader) and dashboard.ts (the Ink app). */
export interface DashboardOptions {
  home: string;
  baseUrl: string;
  /** The gateway's origin; the admin API is under `/admin`. */
  adminUrl: string;
  adminToken: string;
  /** The key `gateway start --demo` just created, shown in the header (the dashboard covers the line that printed it). */
  createdKey?: { name: string; secret: string } | null;
  /** Called when the user quits the dashboard (q or Ctrl-C); not called when the returned stop function ends it. */
  onQuit?: () => void;
  /** Whether quitting also stops the gateway (`gateway start`), for the footer's wording. */
  quitStopsGateway?: boolean;
}
