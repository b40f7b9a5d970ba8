/* The example the simulator opens with: original documentation for a made-up snapshot tool.
 *
 * Chosen so the defaults (words, size 24, overlap 6, top k 2) keep the answer sentence intact:
 * chunk 4 holds it whole and ranks #2 of 12, so top k 1 ranks it out, and sizes 23 or 25 cut it
 * in half. The question says "last" where the text says "kept", as real questions do.
 * tests/browser/test_page.py checks all of this against the core.
 */

export const EXAMPLE = Object.freeze({
  title: "Snapshot retention in Tidewater",
  text: `Snapshot retention in Tidewater

Tidewater takes a snapshot of every attached block volume on the schedule set in the volume policy. A snapshot is copy-on-write: it stores only the blocks that changed since the previous snapshot, so frequent snapshots of a quiet volume cost little space.

Retention is counted in four tiers, shortest period first. Hourly snapshots are kept for 48 hours, after which the nightly compaction job merges them into a single daily snapshot. Daily snapshots are kept for 30 days and weekly snapshots for 26 weeks. Monthly snapshots are never removed automatically; delete them by hand with tidewater snapshot prune --tier monthly.

Compaction runs at 02:00 in the volume's own time zone and takes a short write lock on each volume it touches. If a volume is busy for more than ten minutes, compaction skips it and retries the next night, so a volume under constant load can hold more hourly snapshots than the policy suggests.

Restoring a snapshot creates a new volume and leaves the original untouched. Restores from daily and older tiers read from object storage and can take several minutes per hundred gigabytes; hourly snapshots restore from local disk within seconds.

Snapshots count against the project's storage quota at their changed-block size, not at the full size of the volume.`,
  question: "How long do hourly snapshots last?",
  answer: "Hourly snapshots are kept for 48 hours, after which the nightly compaction job merges them into a single daily snapshot.",
});
