//! The compact form of an event in a ring, and its decoding.
//!
//! Three words: the timestamp in clock ticks; the kind in the low seven
//! bits, [`INHERITED`] in the eighth, and two small arguments above them
//! (`a`, 24 bits, and `b`, 32 bits); and a third argument, usually the
//! task's identity (see `Task::record_id`). A spawn, or a shared fork of a
//! join, packs its site in the second word instead of `a` and `b` when it
//! has one ([`SITE_BIT`]).

use super::recording::{EventKind, SpawnQueue, WorkerActivity};
use super::ring::RawEvent;

pub(crate) const SPAWN: u8 = 1;
pub(crate) const RUN_BEGIN: u8 = 2;
pub(crate) const RUN_END: u8 = 3;
pub(crate) const GLOBAL_PULL: u8 = 4;
pub(crate) const STEAL: u8 = 5;
pub(crate) const STATE: u8 = 6;
pub(crate) const WAKE: u8 = 7;
pub(crate) const NOOP_WAKEUP: u8 = 8;
pub(crate) const UNPARK: u8 = 9;
pub(crate) const RESPAWN: u8 = 10;
pub(crate) const PANIC: u8 = 11;
pub(crate) const WAIT_BEGIN: u8 = 12;
pub(crate) const WAIT_END: u8 = 13;
pub(crate) const FORK_SHARED: u8 = 14;
pub(crate) const FORK_STOLEN: u8 = 15;

/// Spawn queues, as `a` of a `SPAWN`.
pub(crate) const QUEUE_LOCAL: u32 = 0;
pub(crate) const QUEUE_GLOBAL: u32 = 1;
pub(crate) const QUEUE_INBOX: u32 = 2;

/// Worker activities, as `a` of a `STATE`.
pub(crate) const RUNNING: u32 = 0;
pub(crate) const SEARCHING: u32 = 1;
pub(crate) const SLEEPING: u32 = 2;
pub(crate) const RESPAWNING: u32 = 3;
pub(crate) const STOPPED: u32 = 4;

/// Set on an event whose time is not its own reading but its worker's
/// latest before it (`spawn_clock.rs`).
pub(crate) const INHERITED: u8 = 0x80;

const KIND_MASK: u64 = 0x7f;
const A_MAX: u64 = (1 << 24) - 1;

/// A `SPAWN` (or a `FORK_SHARED`, whose `a` and `b` are zero) that carries its site (`#[track_caller]`'s
/// `Location::caller()`): bit 10 of the second word is set, the queue is in
/// bits 8..10, an inbox's worker in bits 11..20, and the site's address,
/// shifted right by 3, in bits 20..64.
///
/// Why 44 bits suffice: a `Location` holds a `&str` and two `u32`s, so it
/// is 8-aligned on a 64-bit target and its low 3 bits are zero; and it is a
/// static in a loaded object, which 64-bit Linux maps below 2^47 (x86-64's
/// user space with 4-level paging; 5-level paging and arm64's 48-bit space
/// give higher addresses only to `mmap`s that ask for them, but the check
/// in [`pack_with_site`] does not rely on this). A site that does not fit (an
/// address at or above 2^47, or an inbox worker at or above 512) is left
/// out: the spawn is packed as before, site bit clear, worker in `b`.
pub(crate) const SITE_BIT: u64 = 1 << 10;
const SITE_SHIFT: u32 = 20;
const SITE_WORKER_MAX: u64 = (1 << 9) - 1;

/// Packs a spawn or a shared fork with its site (see [`SITE_BIT`]).
#[inline(always)]
pub(crate) fn pack_with_site(
    ticks: u64,
    kind: u8,
    queue: u32,
    worker: u32,
    site: &'static std::panic::Location<'static>,
    c: u64,
) -> RawEvent {
    let address = std::ptr::from_ref(site) as usize as u64;
    if address >> 47 == 0 && u64::from(worker) <= SITE_WORKER_MAX {
        let word = u64::from(kind)
            | (u64::from(queue) << 8)
            | SITE_BIT
            | (u64::from(worker) << 11)
            | ((address >> 3) << SITE_SHIFT);
        [ticks, word, c]
    } else {
        pack(ticks, kind, queue, worker, c)
    }
}

/// The site of a spawn or shared fork packed by [`pack_with_site`], if it
/// carries one.
///
/// Sound because every `SPAWN` or `FORK_SHARED` whose [`SITE_BIT`] is set
/// was packed by [`pack_with_site`] from a `&'static Location` of this
/// process (nothing else writes that bit in either kind: [`pack`] puts `a`
/// in bits 8..32, and a spawn's `a`, its queue, is at most 2, a shared
/// fork's 0), and a ring's reader keeps no torn event (`ring.rs`), so the
/// address is exactly one that `Location::caller()`
/// returned: a static, alive for the whole process.
pub(crate) fn site_of(event: &Unpacked) -> Option<&'static std::panic::Location<'static>> {
    if !matches!(event.kind, SPAWN | FORK_SHARED) || event.raw_word & SITE_BIT == 0 {
        return None;
    }
    let address = (event.raw_word >> SITE_SHIFT) << 3;
    // SAFETY: as above: the address of a `&'static Location` this process
    // made, written whole.
    Some(unsafe { &*(address as usize as *const std::panic::Location<'static>) })
}

/// Packs an event.
#[inline(always)]
pub(crate) fn pack(ticks: u64, kind: u8, a: u32, b: u32, c: u64) -> RawEvent {
    let a = u64::from(a).min(A_MAX);
    [ticks, u64::from(kind) | (a << 8) | (u64::from(b) << 32), c]
}

/// An event unpacked, before task ids are matched up.
pub(crate) struct Unpacked {
    pub(crate) ticks: u64,
    pub(crate) kind: u8,
    /// The time is the worker's latest reading before the event
    /// ([`INHERITED`]).
    pub(crate) inherited: bool,
    pub(crate) a: u32,
    pub(crate) b: u32,
    pub(crate) c: u64,
    /// The second word as written (a spawn's site, [`site_of`]).
    pub(crate) raw_word: u64,
}

pub(crate) fn unpack(raw: RawEvent) -> Unpacked {
    let kind = (raw[1] & KIND_MASK) as u8;
    let (a, b) = if matches!(kind, SPAWN | FORK_SHARED) && raw[1] & SITE_BIT != 0 {
        (
            ((raw[1] >> 8) & 0b11) as u32,
            ((raw[1] >> 11) & SITE_WORKER_MAX) as u32,
        )
    } else {
        (((raw[1] >> 8) & A_MAX) as u32, (raw[1] >> 32) as u32)
    };
    Unpacked {
        ticks: raw[0],
        kind,
        inherited: raw[1] & u64::from(INHERITED) != 0,
        a,
        b,
        c: raw[2],
        raw_word: raw[1],
    }
}

/// The public form of an unpacked event whose task identity has been
/// resolved by `task` (kind, raw identity to id). `None` for a word that is
/// not an event (a ring slot never written, or an unknown kind), and for a
/// spawn with no identity.
///
/// `within_ns` bounds an inherited spawn time (`merge.rs`).
pub(crate) fn decode(
    event: &Unpacked,
    within_ns: u64,
    mut task: impl FnMut(u8, u64) -> Option<u64>,
) -> Option<EventKind> {
    let kind = match event.kind {
        SPAWN => EventKind::Spawn {
            task: task(SPAWN, event.c)?,
            queue: match event.a {
                QUEUE_LOCAL => SpawnQueue::Local,
                QUEUE_INBOX => SpawnQueue::Inbox {
                    worker: event.b as usize,
                },
                _ => SpawnQueue::Global,
            },
            within_ns,
        },
        RUN_BEGIN => EventKind::RunBegin {
            task: task(RUN_BEGIN, event.c),
        },
        RUN_END => EventKind::RunEnd {
            task: task(RUN_END, event.c),
            panicked: event.a != 0,
        },
        GLOBAL_PULL => EventKind::GlobalPull {
            batch: event.b,
            local_depth: event.c,
        },
        STEAL => EventKind::Steal {
            victim: event.a as usize,
            batch: event.b,
            local_depth: event.c,
        },
        STATE => EventKind::State(match event.a {
            RUNNING => WorkerActivity::Running,
            SEARCHING => WorkerActivity::Searching,
            SLEEPING => WorkerActivity::Sleeping,
            RESPAWNING => WorkerActivity::Respawning,
            _ => WorkerActivity::Stopped,
        }),
        WAKE => EventKind::Wake {
            handoff: event.a != 0,
        },
        NOOP_WAKEUP => EventKind::NoopWakeup,
        UNPARK => EventKind::Unpark {
            worker: event.a as usize,
        },
        RESPAWN => EventKind::Respawn,
        PANIC => EventKind::Panic {
            task: task(PANIC, event.c),
        },
        WAIT_BEGIN => EventKind::WaitBegin,
        WAIT_END => EventKind::WaitEnd,
        FORK_SHARED => EventKind::ForkShared {
            fork: task(FORK_SHARED, event.c)?,
        },
        FORK_STOLEN => EventKind::ForkStolen {
            fork: task(FORK_STOLEN, event.c),
            owner: event.a as usize,
        },
        _ => return None,
    };
    Some(kind)
}
