#ifndef EG_APPLIANCE_H
#define EG_APPLIANCE_H

/* `egress-guard appliance [WORD] [ARGS...]`: the container image's entry,
 * with no shell in the image. It reads the EG_* environment (docs in
 * egress-guard(8), ENVIRONMENT; the image's ENV lines set the defaults),
 * applies the nftables default-deny through `EG_BIN nft apply` as a child,
 * and then, per WORD:
 *   run (or none, or a flag)  execs `EG_BIN run` with the flags it derived
 *                             (this pid: the cgroup the nft step exempted);
 *   init                      the nft step, then hands EG_INIT_DIRS over;
 *   hold                      the nft step in its own namespace, the mark
 *                             EG_HOLD_MARK, then waits as EG_HOLD_USER;
 *   pause                     waits for SIGTERM (a pod's holder);
 *   fenced                    exit 0 when EG_HOLD_MARK exists (health);
 *   health                    egress-guardctl status --control EG_CONTROL;
 *   nft|check|version         execs EG_BIN with those words;
 *   COMMAND ...               execs COMMAND from PATH (egress-guardctl).
 * Every refusal exits 2 with one line saying what is wrong, before any
 * step that changes something; a failed nft step starts nothing. */
int appliance_main(int argc, char **argv);

#endif
