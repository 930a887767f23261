//! What the flight recorder costs, measured as a tight pair: plain dreadpool
//! and the same pool recording at `RecordLevel::Tasks`, run back to back in
//! ABBA turns (`compare`'s `dreadpool-tasks` rows, issue 15).
//!
//! Why not pair the two contenders' turns in `compare`'s rotation? There,
//! the other pools' runs sit between them: seconds apart with every peer in
//! the rotation. This machine's speed drifts over tens of milliseconds (a
//! 20 ms tree of plain dreadpool ran at 13-24 ns/task within one minute, its
//! workers' own CPU time moving with it), so a ratio of two runs seconds
//! apart carries that drift: with every peer it read 1.45x-1.86x, with the
//! two dreadpool contenders alone 1.39x-1.42x (`BENCHMARKS.md`). Four runs
//! back to back, the first and last of one kind, cancel a drift that is
//! linear over the block, as `scripts/ab.py` does between processes.

use crate::contenders::{Contender, PoolSet, Scenario};
use std::time::Duration;

/// Events a recorded task makes at `Tasks` level: its spawn and its run's
/// begin (a run's end is not recorded; see `recorder/README.md`).
pub const EVENTS_PER_TASK: f64 = 2.0;

/// One block's verdict.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecorderPair {
    /// The recorded pool's time over plain dreadpool's.
    pub ratio: f64,
    /// The extra time per event, in nanoseconds.
    pub ns_per_event: f64,
}

/// Runs `scenario` (of `tasks` tasks) four times, back to back: plain,
/// recorded, recorded, plain; or the other way round when `turn` is odd, so
/// that neither pool always goes first.
pub fn recorder_pair<S>(pools: &mut PoolSet, scenario: &S, tasks: u64, turn: usize) -> RecorderPair
where
    S: Scenario<Output = Duration>,
{
    let (plain, recorded) = (Contender::Dreadpool, Contender::DreadpoolTasks);
    let (a, b) = if turn.is_multiple_of(2) {
        (plain, recorded)
    } else {
        (recorded, plain)
    };
    let mut took = [Duration::ZERO; 2];
    for c in [a, b, b, a] {
        took[usize::from(c == recorded)] += pools.run(c, scenario);
    }
    let [plain_took, recorded_took] = took.map(|t| t.as_secs_f64());
    let runs = 2.0 * tasks.max(1) as f64;
    RecorderPair {
        ratio: recorded_took / plain_took,
        ns_per_event: (recorded_took - plain_took) * 1e9 / runs / EVENTS_PER_TASK,
    }
}
