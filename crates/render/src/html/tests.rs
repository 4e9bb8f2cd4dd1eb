use super::charts::{line_chart, Axis};
use super::*;

#[test]
fn control_characters_become_replacement_characters() {
    assert_eq!(scrub("a\u{0}b\nc\td\u{1b}".into()), "a\u{fffd}b\nc\td\u{fffd}");
}

#[test]
fn charts_hold_every_point_and_escape_names() {
    let names: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
    let axis = Axis { labels: names.clone(), names, caption: None };
    let svg = line_chart(&[("<b>", &[1, 2, 3])], &axis, 400, 200).into_string();
    assert_eq!(svg.matches("<circle").count(), 3);
    assert!(svg.contains("&lt;b&gt;") && !svg.contains("<b>"));
}
