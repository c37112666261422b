import { findProgram } from './kernel-layers.js';
import { probe } from './sandbox-probe.js';
import { SandboxUnavailableError } from './sandbox-unavailable-error.js';

/**
 * The confinement tiers (docs/SANDBOX-TIERS.md), strongest first:
 * `namespaces` (bubblewrap: user, pid, ipc, uts and a shared network
 * namespace, mounts) and `landlock` (Landlock + seccomp + no_new_privs, no
 * namespace), for where user namespaces are refused.
 */
export type SandboxTier = 'namespaces' | 'landlock';
/** `sandbox.tier`: one tier, or `auto`, the strongest that works here. */
export type SandboxTierSetting = SandboxTier | 'auto';

/** The policy's promises the tier is chosen for (the `sandbox` section's part that decides). */
export interface TierSettings {
  readonly tier?: SandboxTierSetting;
  readonly unixSockets?: { readonly allow: readonly string[] };
}

/** The tier chosen and why, for the server-start record. */
export interface ChosenTier {
  readonly tier: SandboxTier;
  readonly why: string;
  /** Under `auto`, why the namespaces tier could not run (the landlock tier's failure names it too). */
  readonly refused?: SandboxUnavailableError;
}

/** `error` (the chosen landlock tier failed to start) with why the namespaces tier could not run either. */
export function noTierWorks(chosen: ChosenTier, error: unknown): unknown {
  if (chosen.refused === undefined || !(error instanceof SandboxUnavailableError)) return error;
  return new SandboxUnavailableError(
    `no confinement tier works here: namespaces: ${chosen.refused.reason}; landlock: ${error.reason}`,
    `${chosen.refused.remedy}; or, for the landlock tier: ${error.remedy}`,
  );
}

/**
 * Chooses the tier `settings.tier` allows. `namespaces` is taken when
 * bubblewrap can create its namespaces here (the probe of `sandbox-probe.ts`).
 * Under `auto`, when it cannot, `landlock`; but a bwrap missing from PATH is
 * an installation to fix, not a refusal: it stops the start (naming the
 * package, and `sandbox.tier: landlock` as the other way), so that a
 * forgotten package never silently weakens the confinement. And not
 * `landlock` either when the policy asks for what
 * only the namespaces tier keeps (host Unix sockets allowed by path): then
 * nothing is chosen. Throws {@link SandboxUnavailableError} with every
 * tier's reason and what to change when no allowed tier can keep the
 * policy's promises; whether Landlock itself works here is checked when its
 * sandbox starts (`LandlockSandbox.start`).
 */
export async function chooseTier(settings: TierSettings): Promise<ChosenTier> {
  const wanted = settings.tier ?? 'auto';
  let refused: SandboxUnavailableError | null = null;
  if (wanted !== 'landlock') {
    let bwrap: string;
    try {
      bwrap = findProgram('bwrap', process.env.PATH ?? '', 'bubblewrap');
    } catch (error) {
      if (wanted === 'namespaces' || !(error instanceof SandboxUnavailableError)) throw error;
      throw new SandboxUnavailableError(
        error.reason,
        `${error.remedy}; or, where user namespaces are refused anyway, set \`sandbox.tier: landlock\``,
      );
    }
    try {
      await probe(bwrap);
      return {
        tier: 'namespaces',
        why: wanted === 'auto' ? 'chosen by auto: user namespaces work here' : 'required by sandbox.tier',
      };
    } catch (error) {
      if (wanted === 'namespaces' || !(error instanceof SandboxUnavailableError)) throw error;
      refused = error;
    }
  }
  const sockets = settings.unixSockets?.allow ?? [];
  if (sockets.length > 0) {
    const reason = `the landlock tier cannot let commands reach host Unix sockets by path (sandbox.unixSockets.allow names ${sockets.join(', ')}): it refuses every AF_UNIX socket`;
    throw new SandboxUnavailableError(
      refused === null
        ? reason
        : `no allowed tier can keep this policy's promises: namespaces: ${refused.reason}; landlock: ${reason}`,
      refused === null
        ? 'remove sandbox.unixSockets.allow, or allow user namespaces and set sandbox.tier to auto or namespaces'
        : `${refused.remedy}; or remove sandbox.unixSockets.allow so that the landlock tier can serve`,
    );
  }
  return {
    tier: 'landlock',
    why:
      refused === null
        ? 'required by sandbox.tier'
        : `chosen by auto: the namespaces tier cannot run here (${refused.reason})`,
    ...(refused !== null && { refused }),
  };
}
