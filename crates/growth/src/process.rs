//! A series is one process's heaps: where another process's begin, and which to judge.

use crate::summary::{HeapSummary, ProcessMark};

/// Where each process's run of heaps begins in `series` (always 0 first): a heap begins a new
/// run when the heap before it is of another process ([`same_process`] says no).
pub fn process_starts(series: &[HeapSummary]) -> Vec<usize> {
    let mut starts = vec![0];
    for (i, w) in series.windows(2).enumerate() {
        if let (Some(a), Some(b)) = (&w[0].process, &w[1].process) {
            if same_process(a, b) == Some(false) {
                starts.push(i + 1);
            }
        }
    }
    starts
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
/// and returns where the last process's heaps begin (0 when all are one process's).
pub(crate) fn last_process(series: &[HeapSummary]) -> (usize, Option<String>) {
    let starts = process_starts(series);
    if starts.len() < 2 {
        return (0, None);
    }
    let last = *starts.last().unwrap_or(&0);
    let runs: Vec<String> = starts
        .iter()
        .zip(starts.iter().skip(1).chain(std::iter::once(&series.len())))
        .map(|(&from, &to)| {
            let heaps =
                if to - from == 1 { format!("heap {}", from + 1) } else { format!("heaps {}–{to}", from + 1) };
            match series[from].process.as_ref().and_then(|p| p.main_class.as_deref()) {
                Some(main) => format!("{heaps} (main class {main})"),
                None => heaps,
            }
        })
        .collect();
    let note = format!(
        "the heaps come from {} JVM processes (a restart, or another program: the JVM's own threads are other threads): {}; only the last process's {} judged, as growth is one process's",
        starts.len(),
        runs.join(", "),
        if series.len() - last == 1 { "heap is".to_string() } else { format!("{} heaps are", series.len() - last) }
    );
    (last, Some(note))
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
        assert_eq!(process_starts(&series), [0, 2]);
        let (last, note) = last_process(&series);
        assert_eq!(last, 2);
        let note = note.unwrap();
        assert!(note.contains("heaps 1–2 (main class Shop), heaps 3–5 (main class Shop)"), "{note}");
    }
}
