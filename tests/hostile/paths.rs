//! The host never follows a path an agent made: strip, lay over, copy, unpack, materialise, remove and gc on agent-written trees, against link chains into the user's repository, its .git, $HOME and /.

#[allow(unused_imports)]
use super::*;
