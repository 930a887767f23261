//! The codec against serde_json, the independent reference: for every wire
//! type, rich values written by each and read by the other give the value
//! back, and the bytes are serde_json's; malformed input is an error
//! wherever serde_json's is, and never a panic.

use super::{from_slice, to_vec, Error};
use crate::histogram::{Distribution, Quantiles};
use crate::interval::Interval;
use crate::monitor::Monitor;
use crate::protocol::{Incoming, Outgoing, RecordingParams, Request, SCHEMA_VERSION};
use crate::report::Report;
use crate::snapshot::{Bucket, HistogramSnapshot, Snapshot, WorkerSnapshot, WorkerState};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::time::Duration;

/// Strings that need every kind of escape, and characters from every
/// UTF-8 length.
const AWKWARD: &[&str] = &[
    "",
    "plain",
    "quote \" backslash \\ slash /",
    "\n\r\t\u{8}\u{c}",
    "\u{0}\u{1}\u{1f}\u{7f}",
    "é ß ü – “curly” ‘single’",
    "日本語のプール",
    "emoji 😀 and 𝄞",
    "\u{2028}\u{2029}\u{feff}",
];

/// Floats that are hard to write and read exactly.
const AWKWARD_FLOATS: &[f64] = &[
    0.0,
    -0.0,
    0.1,
    0.2 + 0.1,
    1.0 / 3.0,
    1.0,
    -1.5,
    1e300,
    -1e300,
    5e-324,
    f64::MIN_POSITIVE,
    f64::MAX,
    f64::MIN,
    f64::EPSILON,
    1e-5,
    1.5e-5,
    1e-4,
    0.00012345,
    1e15,
    1e16,
    1.2345678901234567e16,
    123_456_789.123_456_79,
    9_007_199_254_740_993.0,
    18_446_744_073_709_551_616.0,
    2.5e-7,
];

/// Writes `value` with both codecs, asserts the same bytes, reads each
/// output with both, and asserts each read gives `value` back.
fn check<T>(value: &T) -> Vec<u8>
where
    T: Serialize + DeserializeOwned + PartialEq + Debug,
{
    let (ours, theirs) = check_same_json(value);
    assert_eq!(
        String::from_utf8_lossy(&ours),
        String::from_utf8_lossy(&theirs),
        "the bytes differ from serde_json's"
    );
    ours
}

/// As [`check`], for values with floats: the bytes may differ from
/// serde_json's where a float has two shortest spellings equally near
/// (`float.rs`); read back, the two texts must be the same JSON.
fn check_floats<T>(value: &T) -> Vec<u8>
where
    T: Serialize + DeserializeOwned + PartialEq + Debug,
{
    check_same_json(value).0
}

/// Ours and serde_json's text of `value`, asserted to be the same JSON
/// (floats compared by value) and to read back as `value` either way.
fn check_same_json<T>(value: &T) -> (Vec<u8>, Vec<u8>)
where
    T: Serialize + DeserializeOwned + PartialEq + Debug,
{
    let ours = to_vec(value).unwrap();
    let theirs = serde_json::to_vec(value).unwrap();
    assert_eq!(
        serde_json::from_slice::<Value>(&ours).unwrap(),
        serde_json::from_slice::<Value>(&theirs).unwrap()
    );
    assert_eq!(&serde_json::from_slice::<T>(&ours).unwrap(), value);
    assert_eq!(&from_slice::<T>(&theirs).unwrap(), value);
    assert_eq!(&from_slice::<T>(&ours).unwrap(), value);
    (ours, theirs)
}

/// Reads `bytes` into a `serde_json::Value` with both codecs (ours driving
/// `Value`'s visitor through `deserialize_any`): both fail or both give
/// the same value, numbers classified alike.
fn agree(bytes: &[u8]) -> Result<Value, Error> {
    let ours = from_slice::<Value>(bytes);
    let theirs = serde_json::from_slice::<Value>(bytes);
    match (&ours, &theirs) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "{:?}", String::from_utf8_lossy(bytes)),
        (Err(_), Err(_)) => {}
        _ => panic!(
            "ours {ours:?}, serde_json {theirs:?}, for {:?}",
            String::from_utf8_lossy(bytes)
        ),
    }
    ours
}

/// A small deterministic generator (xorshift64*), so that the random
/// inputs are the same in every run.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

fn histogram(seed: u64) -> HistogramSnapshot {
    let mut h = HistogramSnapshot::default();
    for i in 1..40u64 {
        h.record_n(Duration::from_nanos(i * i * 997 + seed), i);
    }
    h.outliers = seed;
    h
}

/// A 16-worker pool's snapshot after real work, with filled histograms.
fn real_snapshot() -> Snapshot {
    let pool = dreadpool_core::ThreadPoolBuilder::new()
        .with_threads(16)
        .with_thread_name("json \"real\" pool")
        .with_latency_sampling(1)
        .build();
    for i in 0..2_000u64 {
        pool.spawn(move || {
            std::hint::black_box((0..i % 300).sum::<u64>());
        });
    }
    pool.join();
    Snapshot::from(&pool.metrics())
}

/// A snapshot with every field at an extreme and every string awkward.
fn extreme_snapshot() -> Vec<Snapshot> {
    let workers = WorkerState::ALL
        .iter()
        .enumerate()
        .map(|(i, &state)| WorkerSnapshot {
            index: usize::MAX - i,
            state,
            tasks_run: u64::MAX,
            tasks_spawned_local: 0,
            global_pulls: u64::MAX - 1,
            steals_attempted: 1 << 53,
            steals_succeeded: (1 << 53) + 1,
            tasks_stolen: 7,
            sleeps: 8,
            sleeps_cancelled: u64::MAX - 2,
            global_empty_polls: u64::MAX - 3,
            wakeups: 9,
            noop_wakeups: 10,
            respawns: 11,
            panics: 12,
            joins: 13,
            forks_shared: 14,
            forks_stolen: 15,
            busy_duration: Duration::from_nanos(u64::MAX),
            local_queue_depth: usize::MAX,
            stolen_from: vec![0, u64::MAX, 3],
            schedule_delay: histogram(i as u64),
            run_time: HistogramSnapshot {
                buckets: vec![Bucket {
                    lower: Duration::ZERO,
                    upper: Duration::from_nanos(u64::MAX),
                    count: u64::MAX,
                }],
                outliers: 0,
            },
        })
        .collect::<Vec<_>>();
    AWKWARD
        .iter()
        .map(|name| Snapshot {
            name: (*name).to_owned(),
            threads: workers.len(),
            uptime: Duration::from_secs(3),
            global_queue_depth: 5,
            tasks_spawned_external: u64::MAX,
            tasks_pending: 0,
            panics: 1,
            latency_sampling: u32::MAX,
            workers: workers.clone(),
        })
        .collect()
}

#[test]
fn snapshots_match_serde_json() {
    check(&real_snapshot());
    for snapshot in extreme_snapshot() {
        check(&snapshot);
    }
    check(&Snapshot::default());
    for state in WorkerState::ALL {
        check(&state);
    }
}

/// Intervals and reports from a monitor of a real pool, then with every
/// float field set to each awkward float.
#[test]
fn intervals_and_reports_match_serde_json_and_floats_read_back_exactly() {
    let pool = dreadpool_core::ThreadPoolBuilder::new()
        .with_threads(16)
        .with_latency_sampling(1)
        .build();
    let mut monitor = Monitor::new(&pool);
    for _ in 0..3 {
        for i in 0..1_000u64 {
            pool.spawn(move || {
                std::hint::black_box((0..i % 500).sum::<u64>());
            });
        }
        pool.join();
        check_floats(&monitor.sample());
    }
    let report = monitor.report();
    check_floats(&report);
    check(&Report::default());
    check(&Quantiles::of(&histogram(3)));

    let mut interval = report.latest.clone();
    for &x in AWKWARD_FLOATS {
        interval.tasks_per_sec = x;
        interval.busy_ratio = -x;
        interval.mean_steal_batch = x / 3.0;
        if let Some(w) = interval.workers.first_mut() {
            w.steal_success_ratio = x;
            w.busy_ratio = x * 0.7;
        }
        let bytes = check_floats(&interval);
        // Bit-exact, not only equal (-0.0 == 0.0).
        let back: Interval = from_slice(&bytes).unwrap();
        assert_eq!(back.tasks_per_sec.to_bits(), x.to_bits());
        assert_eq!(back.busy_ratio.to_bits(), (-x).to_bits());
        let distribution = Distribution {
            samples: u64::MAX,
            mean: x,
            ..Distribution::default()
        };
        check_floats(&distribution);
    }
}

#[test]
fn every_f64_spelling_is_serde_json_s_and_reads_back_bit_exact() {
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    let randoms = (0..200_000).map(|_| f64::from_bits(random.next()));
    // Also the percentiles a real histogram gives (hdrhistogram's
    // arithmetic, not round numbers).
    let percentiles = {
        let h = histogram(11);
        let q = Quantiles::of(&h);
        [q.p50, q.p90, q.p99, q.p999, q.max, q.mean].map(|d| d.as_secs_f64() / 3.0)
    };
    let mut ties = 0;
    for x in AWKWARD_FLOATS
        .iter()
        .copied()
        .chain(percentiles)
        .chain(randoms)
        .filter(|x| x.is_finite())
    {
        let ours = String::from_utf8(to_vec(&x).unwrap()).unwrap();
        let theirs = serde_json::to_string(&x).unwrap();
        if ours != theirs {
            // Two shortest spellings, equally near (`float.rs`): the same
            // length, and serde_json's reads back as the same f64 too.
            assert_eq!(ours.len(), theirs.len(), "{ours} {theirs}");
            assert_eq!(theirs.parse::<f64>().unwrap().to_bits(), x.to_bits());
            ties += 1;
        }
        assert_eq!(
            from_slice::<f64>(ours.as_bytes()).unwrap().to_bits(),
            x.to_bits()
        );
        assert_eq!(
            serde_json::from_str::<f64>(&ours).unwrap().to_bits(),
            x.to_bits()
        );
    }
    // Ties are rare: anything more is a layout bug.
    assert!(ties < 100, "{ties} spellings differ from serde_json's");
    for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert_eq!(to_vec(&x).unwrap(), b"null");
        assert_eq!(serde_json::to_vec(&x).unwrap(), b"null");
    }
}

#[test]
fn integers_at_their_limits() {
    for n in [0, 1, u64::MAX, u64::MAX - 1, 1 << 63, 1 << 53] {
        assert_eq!(check(&n), n.to_string().as_bytes());
    }
    for n in [i64::MIN, i64::MIN + 1, -1, 0, i64::MAX] {
        assert_eq!(check(&n), n.to_string().as_bytes());
    }
    check(&(u32::MAX, i8::MIN, u8::MAX, i16::MIN, u16::MAX, i32::MIN));
    // A number of the wrong kind or range is serde's error, as with
    // serde_json.
    assert!(from_slice::<u64>(b"-1").is_err());
    assert!(from_slice::<u64>(b"18446744073709551616").is_err());
    assert!(from_slice::<u32>(b"4294967296").is_err());
    assert!(from_slice::<u64>(b"1.5").is_err());
    assert!(from_slice::<i64>(b"-9223372036854775809").is_err());
    assert_eq!(from_slice::<f64>(b"7").unwrap(), 7.0);
    assert_eq!(from_slice::<f64>(b"-7").unwrap(), -7.0);
}

#[test]
fn strings_and_escapes_match_serde_json() {
    for text in AWKWARD {
        check(&(*text).to_owned());
    }
    let every_ascii: String = (0u8..0x80).map(char::from).collect();
    check(&every_ascii);
    check(&'"');
    check(&'😀');
    // Every escape JSON has, read as serde_json reads it.
    for input in [
        r#""\" \\ \/ \b \f \n \r \t""#,
        r#""\u0000 \u001F \u00e9 \u00E9 \u20ac""#,
        r#""\ud83d\ude00 \uD834\uDD1E""#,
        r#""a\u0062c""#,
        "\"raw é 😀 \u{7f}\"",
    ] {
        let ours: String = from_slice(input.as_bytes()).unwrap();
        let theirs: String = serde_json::from_str(input).unwrap();
        assert_eq!(ours, theirs, "{input}");
    }
}

#[test]
fn maps_with_string_and_integer_keys() {
    let by_name: BTreeMap<String, Vec<u64>> = AWKWARD
        .iter()
        .enumerate()
        .map(|(i, s)| ((*s).to_owned(), vec![i as u64; i]))
        .collect();
    check(&by_name);
    let by_number: BTreeMap<u64, Option<i64>> =
        [(0, None), (u64::MAX, Some(i64::MIN)), (7, Some(-1))].into();
    check(&by_number);
    let by_signed: BTreeMap<i32, bool> = [(-5, true), (5, false)].into();
    check(&by_signed);
    assert!(from_slice::<BTreeMap<u8, u8>>(br#"{"300":1}"#).is_err());
    assert!(to_vec(&BTreeMap::from([(vec![1u8], 1u8)])).is_err());
}

#[test]
fn options_vecs_and_enums_of_every_shape() {
    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    enum Shape {
        Unit,
        Newtype(u64),
        Tuple(i64, String),
        Struct { x: f64, y: Option<bool> },
    }
    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Wrapper(Vec<Shape>);
    check_floats(&Wrapper(vec![
        Shape::Unit,
        Shape::Newtype(u64::MAX),
        Shape::Tuple(i64::MIN, "😀\"".into()),
        Shape::Struct { x: -0.0, y: None },
        Shape::Struct {
            x: 1e300,
            y: Some(true),
        },
    ]));
    check(&vec![Some(1u64), None]);
    check(&((), ((),), [0u8; 0]));
    // `{"Unit":null}` is a unit variant too, as serde_json reads it.
    assert_eq!(
        from_slice::<Shape>(br#"{"Unit":null}"#).unwrap(),
        Shape::Unit
    );
    assert!(from_slice::<Shape>(br#""Newtype""#).is_err());
    assert!(from_slice::<Shape>(br#"{"Newtype":1,"Unit":null}"#).is_err());
    assert!(from_slice::<Shape>(br#"{"Teleport":1}"#).is_err());
}

#[test]
fn protocol_messages_match_serde_json() {
    let snapshots = extreme_snapshot();
    let names: Vec<&str> = AWKWARD.to_vec();
    let messages = [
        Outgoing::Hello {
            v: SCHEMA_VERSION,
            server: "dreadpool-metrics",
            version: "0.1.0",
            pid: u32::MAX,
            interval_ms: u64::MAX,
            pools: names.clone(),
            recording: true,
        },
        Outgoing::Hello {
            v: 0,
            server: "",
            version: "",
            pid: 0,
            interval_ms: 0,
            pools: Vec::new(),
            recording: false,
        },
        Outgoing::Snapshots {
            v: SCHEMA_VERSION,
            seq: u64::MAX,
            pools: &snapshots,
        },
        Outgoing::Snapshots {
            v: SCHEMA_VERSION,
            seq: 0,
            pools: &[],
        },
        Outgoing::Pong { v: SCHEMA_VERSION },
        Outgoing::Error {
            v: SCHEMA_VERSION,
            error: "bad \"request\"\n😀",
        },
    ];
    for message in &messages {
        let ours = to_vec(message).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&ours),
            serde_json::to_string(message).unwrap()
        );
        let read: Incoming = from_slice(&ours).unwrap();
        let reference: Incoming = serde_json::from_slice(&ours).unwrap();
        match (message, read, reference) {
            (
                Outgoing::Hello { pools, pid, .. },
                Incoming::Hello {
                    pools: read,
                    pid: read_pid,
                    ..
                },
                Incoming::Hello { pools: theirs, .. },
            ) => {
                assert_eq!(pools, &read);
                assert_eq!(read, theirs);
                assert_eq!(*pid, read_pid);
            }
            (
                Outgoing::Snapshots { pools, seq, .. },
                Incoming::Snapshots {
                    pools: read,
                    seq: read_seq,
                },
                Incoming::Snapshots { pools: theirs, .. },
            ) => {
                assert_eq!(*pools, &read[..]);
                assert_eq!(read, theirs);
                assert_eq!(*seq, read_seq);
            }
            (Outgoing::Pong { .. }, Incoming::Pong, Incoming::Pong) => {}
            (Outgoing::Error { error, .. }, Incoming::Error { error: read }, _) => {
                assert_eq!(*error, read);
            }
            (message, read, theirs) => panic!("{message:?} read as {read:?} and {theirs:?}"),
        }
    }
    // A newer exporter's message, and a newer field in a known one.
    assert!(matches!(
        from_slice::<Incoming>(br#"{"type":"gossip","v":1,"x":[1,{"y":[null]}]}"#),
        Ok(Incoming::Other)
    ));
    assert!(matches!(
        from_slice::<Incoming>(br#"{"v":2,"future":{"a":[1.5,-2]},"type":"pong"}"#),
        Ok(Incoming::Pong)
    ));
    assert!(from_slice::<Incoming>(br#"{"v":1}"#).is_err());
}

/// Fields a newer exporter adds are skipped, fields an older one lacks
/// read as their defaults: the forward and backward compatibility the
/// crate docs promise, through this codec.
#[test]
fn unknown_fields_are_skipped_and_missing_ones_default() {
    let newer = br#"{"name":"q","threads":3,"future":{"deep":[[1],{"x":"\u00e9"}],"n":-1.5e-3},"workers":[{"index":1,"tasks_run":7,"later":null}]}"#;
    let read: Snapshot = from_slice(newer).unwrap();
    assert_eq!(read, serde_json::from_slice::<Snapshot>(newer).unwrap());
    assert_eq!((read.threads, read.uptime), (3, Duration::ZERO));
    assert_eq!(read.workers[0].tasks_run, 7);
    assert_eq!(read.workers[0].state, WorkerState::Sleeping);
    let later_state: WorkerState = from_slice(br#""hibernating""#).unwrap();
    assert_eq!(later_state, WorkerState::Unknown);
}

#[test]
fn requests_read_as_serde_json_reads_them() {
    let lines: &[&[u8]] = &[
        br#"{"request":"ping"}"#,
        br#"{"request":"snapshot"}"#,
        br#" {"request":"hello"} "#,
        br#"{"x":[1,2,{"y":null}],"request":"ping"}"#,
        br#"{"request":"recording"}"#,
        br#"{"request":"recording","pool":1,"since_ns":18446744073709551615,"level":"sch\u0065duler","max_events":9,"id":2}"#,
        br#"{"request":"recording","pool":null}"#,
        br#"{"request":"recording","pool":-1}"#,
        br#"{"request":"recording","pool":1.5}"#,
        br#"{"request":"reboot"}"#,
        br#"{"request":"ping","request":"ping"}"#,
        br#"{"request":7}"#,
        br#"{}"#,
        br#"[]"#,
        b"not json",
        b"",
    ];
    for line in lines {
        let ours = from_slice::<Request>(line);
        let theirs = serde_json::from_slice::<Request>(line);
        assert_eq!(
            format!("{ours:?}").starts_with("Ok"),
            theirs.is_ok(),
            "{:?}: ours {ours:?}, serde_json {theirs:?}",
            String::from_utf8_lossy(line)
        );
        if let (Ok(Request::Recording(a)), Ok(Request::Recording(b))) = (ours, theirs) {
            assert_eq!(a, b);
        }
    }
    match from_slice::<Request>(lines[5]) {
        Ok(Request::Recording(p)) => assert_eq!(
            p,
            RecordingParams {
                id: Some(2),
                pool: 1,
                since_ns: Some(u64::MAX),
                level: Some("scheduler".into()),
                max_events: Some(9),
            }
        ),
        other => panic!("{other:?}"),
    }
}

#[cfg(feature = "recorder")]
mod recordings {
    use super::*;
    use crate::recording::{answer, Body, RecordingRequest, WireEvent, LINE_START};
    use dreadpool_core::RecordLevel;

    /// A reply of about ten thousand events from a real pool.
    pub(super) fn reply_line(tasks: u64) -> Vec<u8> {
        let pool = dreadpool_core::ThreadPoolBuilder::new()
            .with_threads(4)
            .with_thread_name("rec \"ü\"")
            .with_record_level(RecordLevel::Tasks)
            .build();
        for _ in 0..tasks {
            pool.spawn(|| ());
        }
        pool.join();
        let params = RecordingParams {
            id: Some(u64::MAX),
            ..RecordingParams::default()
        };
        answer(&pool.handle(), 0, &params, 1_000_000).unwrap_or_default()
    }

    #[test]
    fn a_recording_reply_is_serde_json_s_bytes_and_reads_back() {
        let line = reply_line(3_000);
        assert!(line.starts_with(LINE_START));
        let body: Body = from_slice(&line).unwrap();
        assert!(body.events.len() > 3_000, "{}", body.events.len());
        let reference: Body = serde_json::from_slice(&line).unwrap();
        assert_eq!(body.events, reference.events);
        assert_eq!(body.sites, reference.sites);
        // The line is `type` and then the body's own fields, exactly as
        // serde_json writes the body.
        let theirs = serde_json::to_vec(&body).unwrap();
        let ours = to_vec(&body).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&theirs)
        );
        let mut expected = LINE_START.to_vec();
        expected.extend_from_slice(&theirs[1..]);
        expected.push(b'\n');
        assert_eq!(
            String::from_utf8_lossy(&line),
            String::from_utf8_lossy(&expected)
        );
        // As the client reads it.
        assert!(matches!(
            from_slice::<Incoming>(&line),
            Ok(Incoming::Recording(_))
        ));
    }

    #[test]
    fn wire_events_of_every_shape_match_serde_json() {
        let every_field = WireEvent {
            t: u64::MAX,
            w: Some(usize::MAX),
            o: Some(0),
            k: crate::recording::Kind::ForkStolen,
            task: Some(u64::MAX),
            queue: Some(crate::recording::Queue::Inbox),
            worker: Some(1),
            victim: Some(2),
            batch: Some(u32::MAX),
            depth: Some(u64::MAX),
            state: Some(crate::recording::State::Respawning),
            panicked: true,
            handoff: true,
            fork: Some(3),
            owner: Some(4),
            within: Some(5),
            site: Some(u32::MAX),
        };
        check(&every_field);
        check(&WireEvent::default());
        let body: Body = from_slice(&reply_line(50)).unwrap();
        for event in &body.events {
            check(event);
        }
        for request in [
            RecordingRequest::pool(0),
            RecordingRequest::pool(usize::MAX)
                .id(u64::MAX)
                .since_ns(0)
                .level(RecordLevel::Off)
                .max_events(usize::MAX),
        ] {
            assert_eq!(
                to_vec(&request).unwrap(),
                serde_json::to_vec(&request).unwrap()
            );
        }
    }

    #[test]
    fn a_truncated_reply_is_an_error_at_every_length() {
        let line = reply_line(20);
        let end = line.len() - 1;
        for cut in 0..end {
            assert!(from_slice::<Body>(&line[..cut]).is_err(), "cut at {cut}");
            assert!(
                from_slice::<Incoming>(&line[..cut]).is_err(),
                "cut at {cut}"
            );
        }
        assert!(from_slice::<Body>(&line[..end]).is_ok());
    }
}

#[test]
fn a_truncated_frame_is_an_error_at_every_length() {
    let snapshots = extreme_snapshot();
    let mut line = to_vec(&Outgoing::Snapshots {
        v: SCHEMA_VERSION,
        seq: 1,
        pools: &snapshots[..2],
    })
    .unwrap();
    for cut in 0..line.len() {
        assert!(
            from_slice::<Incoming>(&line[..cut]).is_err(),
            "cut at {cut}"
        );
        assert!(agree(&line[..cut]).is_err());
    }
    line.extend_from_slice(b" \r\n\t ");
    assert!(from_slice::<Incoming>(&line).is_ok());
    line.push(b'x');
    let error = from_slice::<Incoming>(&line).unwrap_err();
    assert_eq!(
        error,
        Error::at(super::error::ErrorKind::TrailingCharacters, line.len() - 1)
    );
}

#[test]
fn malformed_input_is_an_error_as_with_serde_json() {
    let bad: &[&[u8]] = &[
        b"",
        b" ",
        b"nul",
        b"nulL",
        b"tru",
        b"fals",
        b"[",
        b"[1",
        b"[1,",
        b"[1,]",
        b"[,1]",
        b"[1 2]",
        b"{",
        b"{\"a\"",
        b"{\"a\":",
        b"{\"a\":1,}",
        b"{\"a\" 1}",
        b"{1:1}",
        b"{\"a\":1 \"b\":2}",
        b"{,}",
        b"\"",
        b"\"abc",
        b"\"\\",
        b"\"\\x\"",
        b"\"\\U0041\"",
        b"\"\\u00g0\"",
        b"\"\\u00\"",
        b"\"\\ud800\"",
        b"\"\\ud800x\"",
        b"\"\\ud800\\u0041\"",
        b"\"\\ud800\\ud800\"",
        b"\"\\udc00\"",
        b"\"\\udfff\\ud800\"",
        b"\"tab\there\"",
        b"\"nul\0\"",
        b"\"\x80\"",
        b"\"\xc3\"",
        b"\xff",
        b"01",
        b"-01",
        b"1.",
        b"1.e5",
        b".1",
        b"+1",
        b"-",
        b"1e",
        b"1e+",
        b"1e400",
        b"-1e400",
        b"NaN",
        b"Infinity",
        b"1 2",
        b"{} {}",
        b"[]]",
        b"'single'",
        b"\xef\xbb\xbf{}",
    ];
    for input in bad {
        assert!(
            agree(input).is_err(),
            "{:?}",
            String::from_utf8_lossy(input)
        );
        assert!(from_slice::<Request>(input).is_err());
        assert!(from_slice::<Snapshot>(input).is_err());
    }
    let good: &[&[u8]] = &[
        b"0",
        b"-0",
        b"-0.0",
        b"1E5",
        b"1e-5",
        b"[]",
        b" [ 1 , -2 , 3.5 ] ",
        b"{\"\":{}}",
        b"\"\\ud83d\\ude00\"",
        b"\"\\u0000\"",
        b"{\"a\":1,\"a\":2}",
        b"123456789012345678901234567890",
        b"-123456789012345678901234567890",
        b"1e-400",
    ];
    for input in good {
        assert!(agree(input).is_ok(), "{:?}", String::from_utf8_lossy(input));
    }
}

#[test]
fn nesting_is_limited_as_serde_json_limits_it() {
    fn nested(depth: usize) -> Vec<u8> {
        let mut text = "[".repeat(depth).into_bytes();
        text.extend(std::iter::repeat_n(b']', depth));
        text
    }
    assert!(agree(&nested(127)).is_ok());
    assert!(agree(&nested(128)).is_err());
    // Bombs: none may overflow the stack, whatever reads them.
    let bombs: Vec<Vec<u8>> = vec![
        vec![b'['; 100_000],
        nested(100_000),
        b"{\"a\":".repeat(100_000),
        b"[{\"a\":".repeat(50_000),
        [&br#"{"request":"ping","x":"#[..], &nested(100_000)].concat(),
        [&br#"{"type":"snapshots","pools":"#[..], &nested(100_000)].concat(),
        [&br#"{"type":"gossip","x":"#[..], &nested(100_000)].concat(),
    ];
    for bomb in &bombs {
        let error = from_slice::<Value>(bomb).unwrap_err();
        assert_eq!(error.kind, super::error::ErrorKind::DepthLimitExceeded);
        assert!(from_slice::<Request>(bomb).is_err());
        assert!(from_slice::<Incoming>(bomb).is_err());
        assert!(from_slice::<Snapshot>(bomb).is_err());
        assert!(from_slice::<serde::de::IgnoredAny>(bomb).is_err());
    }
}

/// Random corruptions of a valid frame: wherever serde_json fails ours
/// fails, wherever it succeeds ours gives the same value, and nothing
/// panics.
#[test]
fn corrupted_frames_read_as_serde_json_reads_them() {
    let snapshots = extreme_snapshot();
    let line = to_vec(&Outgoing::Snapshots {
        v: SCHEMA_VERSION,
        seq: 1,
        pools: &snapshots[..1],
    })
    .unwrap();
    let replacements = b"\"\\{}[],:0-9.eE+ uaznt\x01\xc3\xff";
    let mut random = Random(42);
    for _ in 0..20_000 {
        let mut corrupt = line.clone();
        for _ in 0..1 + random.next() % 3 {
            let at = (random.next() % corrupt.len() as u64) as usize;
            let with = replacements[(random.next() % replacements.len() as u64) as usize];
            match random.next() % 3 {
                0 => corrupt[at] = with,
                1 => corrupt.insert(at, with),
                _ => {
                    corrupt.remove(at);
                }
            }
        }
        let _ = agree(&corrupt);
        let ours = from_slice::<Incoming>(&corrupt);
        let theirs = serde_json::from_slice::<Incoming>(&corrupt);
        assert_eq!(
            ours.is_ok(),
            theirs.is_ok(),
            "{:?}: ours {:?}, serde_json {:?}",
            String::from_utf8_lossy(&corrupt),
            ours.err(),
            theirs.err()
        );
    }
}

#[test]
fn errors_say_where() {
    let error = from_slice::<Value>(b"{\"a\":1,}").unwrap_err();
    assert_eq!(error.at, Some(7));
    assert_eq!(error.to_string(), "trailing comma at byte 7");
    let error = from_slice::<Request>(br#"{"request":"reboot"}"#).unwrap_err();
    assert!(error.to_string().contains("reboot"), "{error}");
    assert!(error.at.is_some());
    let error = from_slice::<Value>(b"[\"\xff\"]").unwrap_err();
    assert_eq!(error.at, Some(2));
}

/// What the codec costs against serde_json's: a measurement, ignored by
/// default (timings mean nothing in a debug build). Run with
///
/// ```text
/// cargo test --release -p dreadpool-metrics --features recorder --lib json::tests::cost -- --ignored --nocapture
/// ```
#[test]
#[ignore = "a measurement: run in release with --ignored --nocapture"]
fn cost_against_serde_json() {
    use std::time::Instant;

    fn time(rounds: u32, mut f: impl FnMut()) -> Duration {
        f();
        let start = Instant::now();
        for _ in 0..rounds {
            f();
        }
        start.elapsed() / rounds
    }

    fn compare<T: Serialize + DeserializeOwned>(what: &str, value: &T, rounds: u32) {
        let bytes = to_vec(value).unwrap();
        // Alternating turns, the median of each, so that load on the
        // machine falls on both alike.
        let mut figures: [Vec<Duration>; 4] = Default::default();
        for _ in 0..7 {
            figures[0].push(time(rounds, || {
                std::hint::black_box(serde_json::to_vec(value).unwrap());
            }));
            figures[1].push(time(rounds, || {
                std::hint::black_box(to_vec(value).unwrap());
            }));
            figures[2].push(time(rounds, || {
                std::hint::black_box(serde_json::from_slice::<T>(&bytes).unwrap());
            }));
            figures[3].push(time(rounds, || {
                std::hint::black_box(from_slice::<T>(&bytes).unwrap());
            }));
        }
        let [write_theirs, write_ours, read_theirs, read_ours] = figures.map(|mut f| {
            f.sort();
            f[f.len() / 2]
        });
        println!(
            "{what}: {} bytes; write: serde_json {write_theirs:?}, ours {write_ours:?} \
             ({:.2}x); read: serde_json {read_theirs:?}, ours {read_ours:?} ({:.2}x)",
            bytes.len(),
            write_ours.as_secs_f64() / write_theirs.as_secs_f64(),
            read_ours.as_secs_f64() / read_theirs.as_secs_f64(),
        );
    }

    compare("Snapshot, 16 workers", &real_snapshot(), 2_000);
    #[cfg(feature = "recorder")]
    {
        let line = recordings::reply_line(3_400);
        let body: crate::recording::Body = from_slice(&line).unwrap();
        let what = format!("recording body, {} events", body.events.len());
        compare(&what, &body, 50);
    }
}
