//! The candidates against each other, once each has its verdict: every
//! candidate's tests run on every other's code (`cross_test`, a cell each
//! in `cross_cell`, kept for the same inputs in `cross_reuse`, on texts
//! read as the base wrote them in `base_text`),
//! the agreement that folds those runs into the comparator's ranking
//! (`agree`), a changed API told apart from a broken one (`api_change`),
//! and the probe that looks for an input where two passing candidates
//! differ (`discriminate`). The comparator's own ranking is
//! `layers::compare`.

pub(crate) mod agree;
pub(crate) mod api_change;
pub(crate) mod base_text;
pub(crate) mod cross_cell;
pub(crate) mod cross_reuse;
pub(crate) mod cross_test;
pub(crate) mod discriminate;
