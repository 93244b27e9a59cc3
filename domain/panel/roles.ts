/**
 * A member's role in an instance (docs/panel.md): viewer reads; admin also writes; owner also
 * manages members and keys. Each role includes the ones before it.
 */
export const PANEL_ROLES = ['viewer', 'admin', 'owner'] as const;

export type PanelRole = (typeof PANEL_ROLES)[number];

export function isPanelRole(text: string): text is PanelRole {
  return (PANEL_ROLES as readonly string[]).includes(text);
}

/** Whether `role` may do what `needed` may. */
export function roleAllows(role: PanelRole, needed: PanelRole): boolean {
  return PANEL_ROLES.indexOf(role) >= PANEL_ROLES.indexOf(needed);
}
