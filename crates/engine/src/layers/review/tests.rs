use super::answer::split_location;
use super::*;

#[test]
fn objects_are_found_top_level_only() {
    let objs = json_objects("a {\"x\": {\"verdict\": 1}} b {\"y\": 2} {broken");
    assert_eq!(objs.len(), 2);
    assert!(objs[0].contains_key("x"));
}

#[test]
fn locations_split() {
    assert_eq!(
        split_location("src/a.rs:12"),
        (Some("src/a.rs".into()), Some(12))
    );
    assert_eq!(
        split_location("src/a.rs:3-7"),
        (Some("src/a.rs".into()), Some(3))
    );
    assert_eq!(split_location("src/a.rs"), (Some("src/a.rs".into()), None));
    assert_eq!(split_location(" "), (None, None));
}
