//! Unit tests of `dashboard`: the candidate tabs and the parts of the
//! status rows.

use super::*;

fn tabs_of(widths: &[u16], width: u16, focus: usize) -> (Vec<usize>, Option<usize>) {
    let l = layout(Rect::new(0, 0, width, 20), widths, focus);
    (
        l.tabs.iter().map(|(i, _)| *i).collect(),
        l.more.map(|(n, _)| n),
    )
}

#[test]
fn every_candidate_is_either_a_tab_or_counted() {
    // Eight titles of 14 columns on 60: three fit beside the count.
    let w = [14u16; 8];
    assert_eq!(tabs_of(&w, 60, 0), (vec![0, 1, 2], Some(5)));
    // The focused one is always shown, the count covers the rest.
    for focus in 0..8 {
        let (shown, more) = tabs_of(&w, 60, focus);
        assert!(shown.contains(&focus), "{focus}: {shown:?}");
        assert_eq!(shown.len() + more.unwrap_or(0), 8);
    }
    assert_eq!(tabs_of(&w, 60, 7).0, vec![5, 6, 7]);
}

#[test]
fn a_grid_has_even_rows() {
    // 120 columns fit three of 38; four candidates are 2 + 2, not 3 + 1,
    // and five are 3 + 2.
    let shape = |n: usize| {
        let l = layout(Rect::new(0, 0, 120, 40), &vec![14; n], 0);
        let mut rows: Vec<u16> = Vec::new();
        let mut per_row: Vec<usize> = Vec::new();
        for (_, r) in &l.cells {
            match rows.iter().position(|y| *y == r.y) {
                Some(k) => per_row[k] += 1,
                None => {
                    rows.push(r.y);
                    per_row.push(1);
                }
            }
        }
        per_row
    };
    assert_eq!(shape(4), vec![2, 2]);
    assert_eq!(shape(5), vec![3, 2]);
    assert_eq!(shape(6), vec![3, 3]);
    // Three side by side still fit in one row.
    assert_eq!(shape(3), vec![3]);
}

#[test]
fn no_count_when_every_title_fits() {
    // Too narrow for columns or a grid, wide enough for all titles.
    assert_eq!(tabs_of(&[14, 14, 14], 42, 2), (vec![0, 1, 2], None));
}

#[test]
fn the_count_is_drawn_after_the_last_tab() {
    let l = layout(Rect::new(0, 0, 60, 20), &[14; 8], 0);
    let (_, last) = l.tabs.last().unwrap();
    let (_, more) = l.more.unwrap();
    assert_eq!(more.x, last.x + last.width);
    assert_eq!(more.width as usize, width(&more_label(5)));
}

mod parts_tests {
    use super::parts_in_rows;

    #[test]
    fn parts_fill_rows_whole_and_a_part_wider_than_a_row_wraps() {
        let parts = || {
            ["attempt 2: 0:09", "agent 0:03, all 0:07", "tokens –"]
                .into_iter()
                .map(String::from)
        };
        assert_eq!(
            parts_in_rows(parts(), 80),
            vec!["attempt 2: 0:09 · agent 0:03, all 0:07 · tokens –"]
        );
        assert_eq!(
            parts_in_rows(parts(), 38),
            vec!["attempt 2: 0:09 · agent 0:03, all 0:07", "tokens –"]
        );
        assert_eq!(
            parts_in_rows(parts(), 16),
            vec!["attempt 2: 0:09", "agent 0:03, all", "0:07 · tokens –"]
        );
    }
}
