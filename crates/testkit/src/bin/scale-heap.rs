//! Writes a heap dump of a given number of objects with realistic shapes, streaming it to disk
//! (see `testkit::scale`): `scale-heap OBJECTS SESSIONS OUT.hprof [SEED]`. Prints what it wrote
//! as one line of JSON.

use std::io::BufWriter;
use std::process::ExitCode;

use testkit::scale::{write_scale_heap, ScaleSpec};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |i: usize| args.get(i).and_then(|a| a.replace('_', "").parse::<u64>().ok());
    let (Some(objects), Some(sessions), Some(out)) = (number(0), number(1), args.get(2)) else {
        eprintln!("usage: scale-heap OBJECTS SESSIONS OUT.hprof [SEED]");
        return ExitCode::from(2);
    };
    let spec = ScaleSpec { objects, sessions, seed: number(3).unwrap_or(1) };
    let written =
        std::fs::File::create(out).and_then(|f| write_scale_heap(BufWriter::with_capacity(8 << 20, f), &spec));
    match written {
        Ok(s) => {
            println!(
                r#"{{"objects":{},"classes":{},"references":{},"bytes":{}}}"#,
                s.objects, s.classes, s.references, s.bytes
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("scale-heap: cannot write {out}: {e}");
            ExitCode::from(2)
        }
    }
}
