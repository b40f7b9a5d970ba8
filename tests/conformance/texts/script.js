// Snapshot pruning, as the service runs it nightly.
const DAY = 24 * 60 * 60 * 1000;

let clock = () => Date.now();

class Pruner {
  constructor(days, weeks) {
    this.days = days;
    this.weeks = weeks;
  }

  keep(snapshot) {
    if (snapshot.hold) return true;
    const age = (clock() - snapshot.taken) / DAY;
    if (snapshot.kind === "daily") return age <= this.days;
    return age <= this.weeks * 7;
  }
}

function prune(snapshots, pruner) {
  const kept = [];
  for (const s of snapshots) {
    if (pruner.keep(s)) kept.push(s);
  }
  return kept;
}

var legacy = true;

switch (process.env.MODE) {
case "dry":
  console.log("dry run");
  break;
default:
  console.log(prune([], new Pruner(14, 8)).length);
}
