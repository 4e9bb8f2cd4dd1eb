//! A series is one process's heaps: where another process's begin, and which to judge.

use crate::summary::{HeapSummary, ProcessMark};

/// Which process each heap of `series` comes from, numbered from 0 in order of first
/// appearance. A heap is of the process of the heap before it unless their marks say
/// otherwise ([`same_process`]); then of an earlier process whose last marked heap its mark
/// matches, so that two programs dumped in turn are two processes, not one per heap; else of
/// a new one.
pub fn processes(series: &[HeapSummary]) -> Vec<usize> {
    let mut of = Vec::with_capacity(series.len());
    // Each process's last heap with a mark: what the next heap is compared with.
    let mut marks: Vec<Option<&ProcessMark>> = Vec::new();
    for h in series {
        let prev = of.last().copied();
        let id = match (&h.process, prev) {
            (_, None) => {
                marks.push(None);
                0
            }
            (None, Some(p)) => p,
            (Some(m), Some(p)) => {
                let same = |g: usize| marks[g].map_or(Some(true), |x| same_process(x, m));
                if same(p) != Some(false) {
                    p
                } else if let Some(g) = (0..marks.len()).find(|&g| g != p && same(g) == Some(true)) {
                    g
                } else {
                    marks.push(None);
                    marks.len() - 1
                }
            }
        };
        if let Some(m) = &h.process {
            marks[id] = Some(m);
        }
        of.push(id);
    }
    of
}

/// Whether two heaps come from one JVM process, when their marks tell: a thread id both
/// have, at the same address in both, says yes, and only at other addresses, no (a thread
/// keeps the address of its VM structure while it lives, and the JDK's threads get the same
/// ids in every process); failing that, two different main classes say no.
pub fn same_process(a: &ProcessMark, b: &ProcessMark) -> Option<bool> {
    let (mut i, mut j) = (0, 0);
    let mut shared = false;
    while i < a.threads.len() && j < b.threads.len() {
        let ([ta, na], [tb, nb]) = (a.threads[i], b.threads[j]);
        match ta.cmp(&tb) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                if na == nb {
                    return Some(true);
                }
                shared = true;
                (i, j) = (i + 1, j + 1);
            }
        }
    }
    if shared {
        return Some(false);
    }
    match (&a.main_class, &b.main_class) {
        (Some(x), Some(y)) if x != y => Some(false),
        _ => None,
    }
}

/// Says which heaps of `series` come from other processes than the last heap's, as a note,
/// and returns the last heap's process's heaps, oldest first (every heap when all are one
/// process's).
pub(crate) fn last_process(series: &[HeapSummary]) -> (Vec<usize>, Option<String>) {
    let of = processes(series);
    let count = of.iter().max().map_or(0, |&m| m + 1);
    let last = of.last().copied().unwrap_or(0);
    let mine: Vec<usize> = (0..series.len()).filter(|&i| of[i] == last).collect();
    if count < 2 {
        return (mine, None);
    }
    let groups: Vec<String> = (0..count)
        .map(|p| {
            let heaps: Vec<usize> = (0..series.len()).filter(|&i| of[i] == p).collect();
            let listed = match heaps.as_slice() {
                [one] => format!("heap {}", one + 1),
                [a, .., b] if b - a + 1 == heaps.len() => format!("heaps {}–{}", a + 1, b + 1),
                _ => format!("heaps {}", heaps.iter().map(|i| (i + 1).to_string()).collect::<Vec<_>>().join(", ")),
            };
            match series[heaps[0]].process.as_ref().and_then(|p| p.main_class.as_deref()) {
                Some(main) => format!("{listed} (main class {main})"),
                None => listed,
            }
        })
        .collect();
    let note = format!(
        "the heaps come from {count} JVM processes (a restart, or another program: the JVM's own threads are other threads): {}; only the last heap's process's {} judged, as growth is one process's",
        groups.join(", "),
        if mine.len() == 1 { "heap is".to_string() } else { format!("{} heaps are", mine.len()) }
    );
    (mine, Some(note))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(threads: &[(u64, u64)], main: Option<&str>) -> ProcessMark {
        ProcessMark { threads: threads.iter().map(|&(t, n)| [t, n]).collect(), main_class: main.map(String::from) }
    }

    #[test]
    fn one_thread_at_the_same_address_makes_one_process() {
        let a = mark(&[(1, 0x7f00), (2, 0x7f10), (9, 0x7f90)], Some("Shop"));
        let b = mark(&[(2, 0x7f10), (9, 0x7e00), (30, 0x7f30)], Some("Shop"));
        assert_eq!(same_process(&a, &b), Some(true));
    }

    #[test]
    fn the_same_ids_at_other_addresses_are_another_process() {
        let before = mark(&[(1, 0x7f00), (2, 0x7f10), (3, 0x7f20)], Some("Shop"));
        let restarted = mark(&[(1, 0x7a00), (2, 0x7a10), (3, 0x7a20)], Some("Shop"));
        assert_eq!(same_process(&before, &restarted), Some(false));
    }

    #[test]
    fn without_shared_threads_main_classes_decide_or_nothing_does() {
        let a = mark(&[(1, 0x7f00)], Some("Shop"));
        assert_eq!(same_process(&a, &mark(&[(5, 1)], Some("Demo"))), Some(false));
        assert_eq!(same_process(&a, &mark(&[(5, 1)], Some("Shop"))), None);
        assert_eq!(same_process(&a, &mark(&[], None)), None);
    }

    #[test]
    fn the_series_is_split_where_the_process_changes() {
        let heap =
            |threads: &[(u64, u64)]| HeapSummary { process: Some(mark(threads, Some("Shop"))), ..Default::default() };
        let first = [(1, 10), (2, 20)];
        let second = [(1, 11), (2, 21)];
        let series = [heap(&first), heap(&first), heap(&second), HeapSummary::default(), heap(&second)];
        assert_eq!(processes(&series), [0, 0, 1, 1, 1]);
        let (mine, note) = last_process(&series);
        assert_eq!(mine, [2, 3, 4]);
        let note = note.unwrap();
        assert!(
            note.contains("2 JVM processes")
                && note.contains("heaps 1–2 (main class Shop), heaps 3–5 (main class Shop)"),
            "{note}"
        );
    }

    #[test]
    fn two_programs_dumped_in_turn_are_two_processes() {
        let of = |threads: &[(u64, u64)], main: &str| HeapSummary {
            process: Some(mark(threads, Some(main))),
            ..Default::default()
        };
        let (shop, batch) = ([(1, 10), (2, 20)], [(1, 31), (2, 41)]);
        let series =
            [of(&shop, "Shop"), of(&batch, "Batch"), of(&shop, "Shop"), of(&batch, "Batch"), of(&shop, "Shop")];
        assert_eq!(processes(&series), [0, 1, 0, 1, 0]);
        let (mine, note) = last_process(&series);
        assert_eq!(mine, [0, 2, 4], "every heap of the last heap's program is judged");
        let note = note.unwrap();
        assert!(
            note.contains("2 JVM processes")
                && note.contains("heaps 1, 3, 5 (main class Shop), heaps 2, 4 (main class Batch)"),
            "{note}"
        );
    }
}
