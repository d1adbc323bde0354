#!/usr/bin/python3
"""Reference fit with scikit-learn's RandomForestRegressor on nnergy's own features and splits.

The thesis (seed 000 ch. 5-6) used scikit-learn's random forest; this script fits it on exactly
the features, test split and folds that `nnergy evaluate` used, so that nnergy's predictors can be
compared with it side by side. Run with Debian's interpreter (python3-sklearn):

    nnergy evaluate --db data/datasets/cpu.sqlite --predictor forest --folds 15 \
        --holdout-networks resnet50,vit_b_16 --features-csv /tmp/features.csv
    /usr/bin/python3 tools/sklearn_reference.py /tmp/features.csv

It prints, for the time target and each mode, the k-fold CV R² (mean ± σ over the folds), the
test-split metrics and, when networks were held out, the metrics on the held-out networks' ops,
plus the fit and predict times, on the same rows as `nnergy evaluate` uses for each. Network-level sums need each network's op counts,
which the features file does not carry; `nnergy evaluate` reports those.
"""

import argparse
import csv
import math
import sys
import time

import numpy as np
from sklearn.ensemble import RandomForestRegressor

META = ["row", "signature", "op_type", "mode", "clock_mhz", "dtype", "split", "fold", "holdout",
        "time_s", "power_w"]


def read_features(path):
    with open(path, newline="") as f:
        lines = [line for line in f if not line.startswith("#")]
    reader = csv.reader(lines)
    header = next(reader)
    if header[:len(META)] != META:
        sys.exit(f"{path}: not an nnergy --features-csv file (expected columns {META})")
    rows = list(reader)
    names = header[len(META):]
    x = np.array([[float(v) for v in r[len(META):]] for r in rows])
    meta = {k: [r[i] for r in rows] for i, k in enumerate(META)}
    return names, x, meta


def metrics(actual, predicted):
    actual = np.asarray(actual)
    predicted = np.asarray(predicted)
    rel = (predicted - actual) / actual
    ss_res = float(np.sum((actual - predicted) ** 2))
    ss_tot = float(np.sum((actual - actual.mean()) ** 2))
    return {
        "n": len(actual),
        "r2": 1 - ss_res / ss_tot if ss_tot > 0 else float("nan"),
        "mape_percent": 100 * float(np.mean(np.abs(rel))),
        "rmse": math.sqrt(float(np.mean((actual - predicted) ** 2))),
        "rmspe_percent": 100 * math.sqrt(float(np.mean(rel ** 2))),
        "within_10_percent": 100 * float(np.mean(np.abs(rel) <= 0.10)),
    }


def make_forest(args):
    return RandomForestRegressor(n_estimators=args.trees, random_state=args.seed, n_jobs=args.jobs)


def fit_predict(args, x_train, y_train, x_eval):
    forest = make_forest(args)
    # Same convention as nnergy's tree models: fit log(time), predict exp; --raw fits seconds.
    forest.fit(x_train, y_train if args.raw else np.log(y_train))
    p = forest.predict(x_eval)
    return p if args.raw else np.exp(p)


def line(label, m):
    return (f"{label:<34} {m['n']:>5} {m['r2']:>8.4f} {m['mape_percent']:>9.1f} % "
            f"{m['rmse']:>11.3e} s {m['rmspe_percent']:>9.1f} % {m['within_10_percent']:>7.1f} %")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("features_csv")
    parser.add_argument("--trees", type=int, default=100,
                        help="trees in the forest (100: sklearn's default and nnergy's forest)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--raw", action="store_true", help="fit seconds instead of log(seconds)")
    args = parser.parse_args()

    names, x, meta = read_features(args.features_csv)
    y = np.array([float(v) for v in meta["time_s"]])
    split = np.array(meta["split"])
    fold = np.array([int(v) for v in meta["fold"]])
    holdout = np.array([v == "1" for v in meta["holdout"]])
    mode = np.array(meta["mode"])
    modes = sorted(set(mode))
    # The same rows as `nnergy evaluate` (learn/evaluation.cc): CV over the non-test rows' folds,
    # the test split fitted on every non-test row, and the held-out networks fitted on every row
    # that is not one of their ops.
    test = split == "test"
    print(f"sklearn {__import__('sklearn').__version__} RandomForestRegressor, {args.trees} trees, "
          f"target {'time_s' if args.raw else 'log(time_s)'}, {len(names)} features, "
          f"{len(y)} rows ({int((~test).sum())} non-test, {int(test.sum())} test, "
          f"{int(holdout.sum())} held-out networks' ops)")

    cv = {m: [] for m in modes}
    for k in sorted(set(fold[fold >= 0])):
        fit_rows = (fold >= 0) & (fold != k)
        eval_rows = fold == k
        p = fit_predict(args, x[fit_rows], y[fit_rows], x[eval_rows])
        for m in modes:
            sel = mode[eval_rows] == m
            if sel.sum() >= 2:
                cv[m].append(metrics(y[eval_rows][sel], p[sel])["r2"])
    for m in modes:
        if cv[m]:
            sd = np.std(cv[m], ddof=1) if len(cv[m]) > 1 else 0
            print(f"{len(cv[m])}-fold CV R², {m}: {np.mean(cv[m]):.3f} ± {sd:.3f}")

    print(f"{'split':<34} {'rows':>5} {'R²':>8} {'MAPE':>11} {'RMSE':>13} {'RMSPE':>11} "
          f"{'±10 %':>9}")
    for label, fit_rows, rows in (("test", ~test, test),
                                  ("held-out networks' ops", ~holdout, holdout)):
        if rows.sum() < 2:
            continue
        start = time.perf_counter()
        forest = make_forest(args)
        forest.fit(x[fit_rows], y[fit_rows] if args.raw else np.log(y[fit_rows]))
        fit_s = time.perf_counter() - start
        start = time.perf_counter()
        p = forest.predict(x[rows])
        predict_s = time.perf_counter() - start
        p = p if args.raw else np.exp(p)
        for m in modes:
            sel = mode[rows] == m
            if sel.sum() >= 2:
                print(line(f"{label}, {m}", metrics(y[rows][sel], p[sel])))
        print(f"  fit on {int(fit_rows.sum())} rows: {fit_s:.2f} s; "
              f"predict {int(rows.sum())} rows: {predict_s * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
