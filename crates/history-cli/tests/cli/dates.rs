//! Time bounds name real calendar days: a day past its month's end is a usage error, not the
//! first days of the next month.

use crate::common::Roots;

#[test]
fn a_day_past_the_end_of_its_month_is_a_usage_error() {
    let r = Roots::new();
    for args in [
        ["list", "--since", "2026-02-30"],
        ["list", "--since", "2026-02-29"],
        ["list", "--until", "2026-04-31T00:00:00Z"],
    ] {
        let text = r.run(&args);
        assert_eq!(text.code, 2, "{args:?}");
        assert_eq!(text.stderr.lines().count(), 1, "{args:?}: {}", text.stderr);
        assert!(text.stderr.contains("usage"), "{args:?}: {}", text.stderr);
        let mut with_json = args.to_vec();
        with_json.push("--json");
        let json = r.run(&with_json);
        assert_eq!(json.code, 2, "{args:?}");
        assert_eq!(json.json()["error"]["code"], "usage", "{args:?}");
    }
    // The last day of February in a leap year is a day like any other.
    let leap = r.run(&["list", "--since", "2024-02-29", "--json"]);
    assert_ne!(leap.code, 2, "{}", leap.stdout);
}
