//! Bad input through the binary: one-line errors with offsets and exit code 2, or a result
//! with a warning when most of the dump is readable.

use hprof::RootKind;
use testkit::{HeapBuilder, Ty};

use crate::support::{json, leakscope, temp_dump};

fn run(bytes: &[u8]) -> (i32, String, String) {
    let (_d, p) = temp_dump(bytes);
    let out = leakscope(&["histogram", "--json", p.to_str().unwrap()]);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn error_line(bytes: &[u8], needle: &str) {
    let (code, stdout, stderr) = run(bytes);
    assert_eq!(code, 2, "stderr: {stderr}");
    assert!(stdout.is_empty());
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(stderr.starts_with("error: ") && stderr.contains(needle), "{stderr}");
    assert!(stderr.contains("offset"), "offset missing: {stderr}");
}

fn big_sample() -> Vec<u8> {
    let mut h = HeapBuilder::new();
    let c = h.class("com.example.Item", None, &[("next", Ty::Object)]);
    let mut prev = h.instance(c);
    for _ in 0..2000 {
        let n = h.instance(c);
        h.set(n, "next", prev);
        prev = n;
    }
    h.root(RootKind::JniGlobal, prev);
    h.segment_bytes(4096);
    h.build()
}

#[test]
fn empty_file() {
    error_line(b"", "empty or too short");
}

#[test]
fn not_hprof() {
    error_line(b"%PDF-1.7\n%some pdf that is long enough to pass the size test", "not an HPROF heap dump");
    // Bytes that are not printable are shown escaped once, as a person reads them.
    error_line(b"PK\x03\x04 a zip file, long enough to pass the size test", r#"starts with "PK\x03\x04 a zip file,""#);
}

#[test]
fn a_run_store_given_for_a_dump_names_the_commands_that_read_it() {
    let mut store = b"SQLite format 3\0".to_vec();
    store.resize(4096, 0);
    let (_d, p) = temp_dump(&store);
    for command in ["histogram", "sql", "suspects"] {
        let mut args = vec![command, p.to_str().unwrap()];
        if command == "sql" {
            args.push("SELECT 1");
        }
        let out = leakscope(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{command}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{command}: one line: {stderr}");
        assert!(stderr.contains("is a run store the agent wrote") && stderr.contains("`leakscope growth`"), "{stderr}");
    }
}

#[test]
fn random_bytes() {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let bytes: Vec<u8> = (0..4096)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    error_line(&bytes, "not an HPROF heap dump");
}

#[test]
fn header_only() {
    let mut b = big_sample();
    b.truncate(31);
    error_line(&b, "no heap dump records");
}

#[test]
fn truncated_tail_gives_result_and_warning() {
    let full = big_sample();
    let cut = &full[..full.len() * 9 / 10];
    let (code, stdout, stderr) = run(cut);
    assert_eq!(code, 0, "{stderr}");
    let h: report::Histogram = serde_json::from_str(&stdout).unwrap();
    let items = h.classes.iter().find(|r| r.name == "com.example.Item").unwrap().instances;
    assert!(items > 1000 && items < 2001, "{items}");
    assert!(stderr.contains("warning:") && stderr.contains("truncated") && stderr.contains("offset"), "{stderr}");
    // Scripts see it too: the JSON says where the dump was cut, and carries the warnings.
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let cut = v["truncated_at"].as_u64().expect("truncated_at");
    assert!(cut > 0 && cut <= cut_len(&full), "{v}");
    assert!(v["warnings"].as_array().unwrap().iter().any(|w| w.as_str().unwrap().contains("truncated")));
    // A whole dump says it is not truncated.
    let (_, whole, _) = run(&full);
    let v: serde_json::Value = serde_json::from_str(&whole).unwrap();
    assert_eq!(v["truncated_at"], serde_json::Value::Null);
    assert!(v["warnings"].is_array());
}

/// Where `truncated_tail_gives_result_and_warning` cuts `full`.
fn cut_len(full: &[u8]) -> u64 {
    (full.len() * 9 / 10) as u64
}

#[test]
fn truncated_head_is_an_error() {
    let full = big_sample();
    let header = hprof::Header::parse(&full).unwrap();
    let first_seg = hprof::Records::new(&full, header.len)
        .filter_map(Result::ok)
        .find(|r| r.tag == hprof::tag::HEAP_DUMP_SEGMENT)
        .unwrap();
    // Cut inside the first segment: almost nothing is readable.
    error_line(&full[..first_seg.body_offset() as usize + 100], "not one object");
}

#[test]
fn length_past_the_end() {
    let mut b = big_sample();
    let header = hprof::Header::parse(&b).unwrap();
    let seg = hprof::Records::new(&b, header.len)
        .filter_map(Result::ok)
        .find(|r| r.tag == hprof::tag::HEAP_DUMP_SEGMENT)
        .unwrap();
    let at = seg.offset as usize + 5;
    b[at..at + 4].copy_from_slice(&u32::MAX.to_be_bytes());
    error_line(&b, "could not be read");
}

#[test]
fn unknown_record_tag_is_skipped_with_a_warning() {
    let mut b = big_sample();
    let mut w = hprof::Writer::new(hprof::IdSize::Eight);
    hprof::write_record(&mut w, 0x42, &[1, 2, 3]);
    b.splice(31..31, w.buf);
    let (code, _, stderr) = run(&b);
    assert_eq!(code, 0);
    assert!(stderr.contains("unknown tag") && stderr.contains("tag 0x42"), "{stderr}");
}

#[test]
fn dangling_references_are_counted() {
    let mut h = HeapBuilder::new();
    let c = h.class("Holder", None, &[("ref", Ty::Object)]);
    let o = h.instance(c);
    h.set(o, "ref", testkit::ObjRef(0x4242_4240));
    h.root(RootKind::JniGlobal, o);
    // The histogram does not follow references: the count is the same as with a valid target.
    let (code, stdout, _) = run(&h.build());
    assert_eq!(code, 0);
    assert!(stdout.contains("\"Holder\""));
}

#[test]
fn missing_file_and_directory() {
    let out = leakscope(&["histogram", "/nonexistent/x.hprof"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent/x.hprof") && err.contains("No such file"), "{err}");
    let out = leakscope(&["histogram", "/tmp"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is a directory"));
}

#[test]
fn bad_usage_is_exit_2() {
    let out = leakscope(&["histogram", "--by", "weight", "x.hprof"]);
    assert_eq!(out.status.code(), Some(2));
    let out = leakscope(&["histogram", "--object-alignment", "12", "x.hprof"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("power of two"));
    let demo = crate::support::DEMO;
    for (id, says) in [("0xdead", "no object at 0xdead"), ("zz", "not an object id")] {
        let out = leakscope(&["object", "--quiet", demo, id]);
        assert_eq!(out.status.code(), Some(2), "object {id}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says) && !err.contains("panicked"), "object {id}: {err}");
    }
}

/// A dump from another project's test suite, in `tests/fixtures/corpus/` (its README says
/// what each one is and where it came from).
fn corpus(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/corpus").join(name)
}

/// `info --json` and `histogram --json` of a dump, without the file name.
fn described(path: &std::path::Path) -> (serde_json::Value, serde_json::Value) {
    let p = path.to_str().unwrap();
    let info = leakscope(&["info", "--quiet", "--json", p]);
    assert!(info.status.success(), "{}", String::from_utf8_lossy(&info.stderr));
    let mut info: serde_json::Value = serde_json::from_slice(&info.stdout).unwrap();
    info["file"] = serde_json::Value::Null;
    let histogram = leakscope(&["histogram", "--quiet", "--json", "--top", "0", p]);
    (info, serde_json::from_slice(&histogram.stdout).unwrap())
}

#[test]
fn gzip_dumps_read_as_their_unpacked_copies() {
    let gz = corpus("openjdk_jdk11_04_x64.hprof.gz");
    let dir = tempfile::tempdir().unwrap();
    // gzip's own unpacking is the oracle.
    let plain = dir.path().join("plain.hprof");
    let out = std::process::Command::new("gzip").arg("-dc").arg(&gz).output().expect("gzip");
    assert!(out.status.success());
    std::fs::write(&plain, &out.stdout).unwrap();
    assert_eq!(out.stdout.len(), 14_080_024, "the corpus README's unpacked size");
    let (info, histogram) = described(&plain);
    assert_eq!(described(&gz), (info.clone(), histogram.clone()));
    // Several gzip members, as HotSpot's -gz writes them, named without .gz: the magic decides.
    let half = out.stdout.len() / 2;
    let mut multi = Vec::new();
    for (i, part) in [&out.stdout[..half], &out.stdout[half..]].into_iter().enumerate() {
        let piece = dir.path().join(format!("part{i}"));
        std::fs::write(&piece, part).unwrap();
        let gzip = std::process::Command::new("gzip").arg("-c").arg(&piece).output().unwrap();
        assert!(gzip.status.success());
        multi.extend(gzip.stdout);
    }
    let members = dir.path().join("members.hprof");
    std::fs::write(&members, &multi).unwrap();
    assert_eq!(described(&members), (info, histogram));
    // The growth summary reads it too, and unpacks into --tmp-dir.
    let tmp = dir.path().join("unpack");
    std::fs::create_dir(&tmp).unwrap();
    let s = leakscope(&["summary", "--quiet", "--tmp-dir", tmp.to_str().unwrap(), members.to_str().unwrap()]);
    assert!(s.status.success(), "{}", String::from_utf8_lossy(&s.stderr));
    let missing = leakscope(&["summary", "--quiet", "--tmp-dir", "/nonexistent", members.to_str().unwrap()]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&missing.stderr).contains("cannot unpack"),
        "{}",
        String::from_utf8_lossy(&missing.stderr)
    );
    assert!(String::from_utf8_lossy(&missing.stderr).contains("into /nonexistent"));
    // A copy that cannot be written (files limited to 1 MiB: the write fails with EFBIG, as a
    // full disk fails with ENOSPC) is a write failure, not an unreadable dump.
    let limited = std::process::Command::new("sh")
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 1024; exec \"$0\" histogram --quiet --tmp-dir \"$1\" \"$2\"")
        .arg(env!("CARGO_BIN_EXE_leakscope"))
        .arg(&tmp)
        .arg(&members)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&limited.stderr);
    assert_eq!(limited.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("cannot unpack {} into {}", members.display(), tmp.display())), "{err}");
    assert!(!err.contains("cannot read"), "{err}");
}

#[test]
fn two_heap_dumps_in_one_file_are_told_apart() {
    // Written by the old -agentlib:hprof: two dumps, 3,632 then 3,665 objects (the corpus README).
    let path = corpus("oracle_jdk7_21_hprofagent.hprof");
    let p = path.to_str().unwrap();
    let count = |extra: &[&str]| {
        let info = leakscope(&[&["info", "--json", p][..], extra].concat());
        assert!(info.status.success(), "{}", String::from_utf8_lossy(&info.stderr));
        let err = String::from_utf8_lossy(&info.stderr).into_owned();
        let info: serde_json::Value = serde_json::from_slice(&info.stdout).unwrap();
        let h = leakscope(&[&["histogram", "--quiet", "--json", p][..], extra].concat());
        let h: serde_json::Value = serde_json::from_slice(&h.stdout).unwrap();
        assert_eq!(info["objects"], h["total_instances"], "info and histogram describe the same dump");
        (info, err)
    };
    let (last, err) = count(&[]);
    assert_eq!(last["objects"], 3_665);
    assert!(err.contains("2 heap dumps in the file") && err.contains("reading dump 2 of 2, at offset"), "{err}");
    assert!(!err.contains("share an id"), "the dumps are not merged: {err}");
    let dumps = last["dumps"].as_array().unwrap();
    let counts: Vec<u64> = dumps.iter().map(|d| d["objects"].as_u64().unwrap()).collect();
    assert_eq!(counts, vec![3_632, 3_665]);
    assert!(dumps[0]["timestamp_ms"].as_u64() < dumps[1]["timestamp_ms"].as_u64());
    assert_eq!(count(&["--dump", "1"]).0["objects"], 3_632);
    // A series reads each input once: one warning per input, though the last one is also
    // indexed in full for the report.
    let out = leakscope(&["report", "--quiet", "--json", p, p, p]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let several = report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w.as_str().unwrap().contains("heap dumps in the file"));
    assert_eq!(several.count(), 3, "{}", report["warnings"]);
    let out = leakscope(&["histogram", "--dump", "3", p]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("there is no heap dump 3: the file holds 2"));
}

#[test]
fn selectors_take_short_names_and_refuse_unknown_classes_with_suggestions() {
    let demo = crate::support::DEMO;
    // class: takes a short name that names one class, as rule: does.
    let short = leakscope(&["paths", "--quiet", "--json", demo, "--select", "class:Session"]);
    let full = leakscope(&["paths", "--quiet", "--json", demo, "--select", "class:SessionLeak$Session"]);
    assert!(short.status.success(), "{}", String::from_utf8_lossy(&short.stderr));
    let (short, full): (serde_json::Value, serde_json::Value) =
        (serde_json::from_slice(&short.stdout).unwrap(), serde_json::from_slice(&full.stdout).unwrap());
    assert_eq!(short["selected"], 3_000);
    assert_eq!(short["paths"], full["paths"]);
    // A rule naming a class the heap lacks is an error, not an empty answer.
    let out = leakscope(&["paths", "--quiet", demo, "--select", "rule:Registy>Session"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no class Registy in the dump"));
    let out = leakscope(&["paths", "--quiet", demo, "--select", "class:sessionregistry"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("did you mean SessionLeak$SessionRegistry"));
}

#[test]
fn class_statics_are_not_lumped_into_one_java_lang_class_suspect() {
    // On this MAT test dump, 1,854 classes' statics together passed the threshold and made
    // "1,854 instances of java.lang.Class" a suspect whose contents were one class's statics.
    let gz = corpus("openjdk_jdk11_04_x64.hprof.gz");
    let out = leakscope(&["suspects", "--quiet", "--json", gz.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let titles: Vec<&str> =
        report["suspects"].as_array().unwrap().iter().map(|s| s["title"].as_str().unwrap()).collect();
    assert!(!titles.is_empty(), "the dump's own suspect remains");
    assert!(titles.iter().all(|t| !t.contains("java.lang.Class")), "{titles:?}");
}

#[test]
fn android_static_overhead_is_the_class_objects_size_and_heaps_are_apart() {
    // Dalvik (Android 4): 43,687 records, 1,296 of the 1,406 byte[] are $staticOverhead
    // pseudo-arrays (the corpus README). The app/zygote split was counted by a separate
    // reader (a Python walk of HEAP DUMP INFO runs): 1,422 and 40,969 objects.
    let path = corpus("dialer.android-hprof");
    let p = path.to_str().unwrap();
    let histogram = |extra: &[&str]| json(&[&["histogram", "--quiet", "--json", "--top", "0", p][..], extra].concat());
    let row = |h: &serde_json::Value, name: &str| {
        h["classes"].as_array().unwrap().iter().find(|r| r["name"] == name).map(|r| r["instances"].as_u64().unwrap())
    };
    let all = histogram(&["--heap", "all"]);
    assert_eq!(row(&all, "byte[]"), Some(110));
    assert_eq!(row(&all, "int[][]"), Some(37));
    assert_eq!(row(&all, "java.lang.String[]"), Some(1_396));
    assert_eq!(all["total_instances"], 43_687 - 1_296);
    let heaps: Vec<(String, u64)> = all["heaps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["name"].as_str().unwrap().to_owned(), h["instances"].as_u64().unwrap()))
        .collect();
    assert_eq!(heaps, [("app".to_owned(), 1_422), ("zygote".to_owned(), 40_969)]);
    // Like Android Studio, the app heap by default.
    let app = histogram(&[]);
    assert_eq!((app["heap"].as_str(), app["total_instances"].as_u64()), (Some("app"), Some(1_422)));
    let info = json(&["info", "--quiet", "--json", p]);
    assert_eq!(info["objects"], all["total_instances"], "info counts what histogram --heap all counts");
    assert!(info["layout"].as_str().unwrap().starts_with("Android Dalvik"), "{}", info["layout"]);
    // No pseudo-array is an object: ids of real objects are 8-byte aligned, the overhead
    // arrays' ids are a class id + 1.
    let doms = json(&["dominators", "--quiet", "--json", "--flat", "--top", "0", p]);
    let ids: Vec<u64> = doms["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| u64::from_str_radix(o["id"].as_str().unwrap().trim_start_matches("0x"), 16).unwrap())
        .collect();
    assert!(ids.len() > 10_000, "{}", ids.len());
    assert!(ids.iter().all(|id| id % 8 == 0), "an overhead array is listed as an object");
    let out = leakscope(&["suspects", "--quiet", "--json", p]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("staticOverhead") && !text.contains("\"byte[]\""), "{text}");
    let out = leakscope(&["histogram", "--heap", "image", p]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no heap named \"image\"; it has app, zygote, or all"));
}

#[test]
fn ids_that_are_sequence_numbers_are_said_and_sized_by_the_class_layout() {
    // The old hprof agent numbers objects (0x50000142, 0x50000143, ...) with 4-byte ids even
    // on this 64-bit VM (the dump's own java.vm.name says "64-Bit Server VM").
    let path = corpus("oracle_jdk7_21_hprofagent.hprof");
    let p = path.to_str().unwrap();
    let per_object = |extra: &[&str]| {
        let out = leakscope(&[&["histogram", "--json", "--top", "0", p][..], extra].concat());
        let h: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let object = h["classes"].as_array().unwrap().iter().find(|r| r["name"] == "java.lang.Object").unwrap();
        let warned = h["warnings"].as_array().unwrap().iter().any(|w| w.as_str().unwrap().contains("sequence numbers"));
        (object["shallow_bytes"].as_u64().unwrap() / object["instances"].as_u64().unwrap(), warned)
    };
    // A bare object on 64-bit HotSpot: a 12-byte header aligned to 16 (8 on a 32-bit VM).
    assert_eq!(per_object(&[]), (16, true));
    // The layout flags still decide: uncompressed class pointers make the header 16 bytes.
    assert_eq!(per_object(&["--compressed-class-pointers", "off", "--object-alignment", "32"]), (32, true));
    let info = leakscope(&["info", "--quiet", p]);
    assert!(String::from_utf8_lossy(&info.stdout).contains("object ids are sequence numbers, not addresses"));
}

#[test]
fn references_to_objects_a_whole_dump_leaves_out_are_explained_once_in_info() {
    let mut h = HeapBuilder::new();
    let c = h.class("com.example.Item", None, &[("next", Ty::Object)]);
    let item = h.instance(c);
    h.set(item, "next", testkit::ObjRef(0x7fff_0000));
    h.root(RootKind::JniGlobal, item);
    let (_d, p) = temp_dump(&h.build());
    let p = p.to_str().unwrap();
    let info = leakscope(&["info", p]);
    let err = String::from_utf8_lossy(&info.stderr);
    assert!(err.contains("note: 1 reference points to no object") && err.contains("change no count"), "{err}");
    let out = leakscope(&["dominators", "--json", p]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("no object"), "said again by every command: {err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["warnings"][0].as_str().unwrap().contains("points to no object"), "scripts still see it: {v}");
    // In a cut dump, references to objects past the cut are lost data, said on every command.
    let mut h = HeapBuilder::new();
    let c = h.class("com.example.Item", None, &[("next", Ty::Object)]);
    let items: Vec<testkit::ObjRef> = (0..2000).map(|_| h.instance(c)).collect();
    for pair in items.windows(2) {
        h.set(pair[0], "next", pair[1]);
    }
    h.root(RootKind::JniGlobal, items[0]);
    let full = h.segment_bytes(4096).build();
    let (_d, cut) = temp_dump(&full[..full.len() * 9 / 10]);
    let out = leakscope(&["dominators", cut.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("warning: 1 reference points to no object"), "{err}");
}
