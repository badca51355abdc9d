//! How a test run becomes evidence: the guardrail's own run read as
//! results (`test_run`, `junit_run`, `test_report`), the base's own tests
//! laid over the change and judged (`test_evidence`, `base_defined`,
//! `base_cache`), the canaries that check the results are the runner's
//! (`canary`, `mutants`), and the base's tests in the profile the project
//! ships (`shipped`). A judgement is made once per exact input (`reuse`). The pipeline's sequence runs it as a guardrail's
//! check; cross-testing reuses its runs.

pub(crate) mod base_cache;
pub(crate) mod base_defined;
pub(crate) mod canary;
pub(crate) mod junit_run;
pub(crate) mod mutants;
pub(crate) mod reuse;
pub(crate) mod shipped;
pub(crate) mod test_evidence;
pub(crate) mod test_report;
pub(crate) mod test_run;
#[cfg(test)]
mod test_run_tests;
