#!/usr/bin/python3
"""Reference fit with scikit-learn's RandomForestRegressor on nnergy's own features and splits.

The thesis (seed 000 ch. 5-6) used scikit-learn's random forest; this script fits it on exactly
the features, test split and folds that `nnergy evaluate` used, so that nnergy's predictors can be
compared with it side by side. Run with Debian's interpreter (python3-sklearn):

    nnergy evaluate --db data/datasets/cpu.sqlite --predictor forest --folds 15 \
        --holdout-networks resnet50,vit_b_16 --features-csv /tmp/features.csv
    /usr/bin/python3 tools/sklearn_reference.py /tmp/features.csv

It prints, for the time target and each mode, the k-fold CV R² (mean ± σ over the folds, on the
training ops), the test-split metrics and, when networks were held out, the metrics on the held-out
networks' ops, plus the fit and predict times. Network-level sums need each network's op counts,
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
    parser.add_argument("--trees", type=int, default=300, help="trees in the forest (300)")
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
    train = (split == "train") & ~holdout
    test = (split == "test") & ~holdout

    print(f"sklearn {__import__('sklearn').__version__} RandomForestRegressor, {args.trees} trees, "
          f"target {'time_s' if args.raw else 'log(time_s)'}, {len(names)} features, "
          f"{len(y)} rows ({int(train.sum())} train, {int(test.sum())} test, "
          f"{int(holdout.sum())} held-out networks' ops)")
    print(f"{'split':<34} {'rows':>5} {'R²':>8} {'MAPE':>11} {'RMSE':>13} {'RMSPE':>11} "
          f"{'±10 %':>9}")

    folds = sorted(set(fold[train]) - {-1})
    scores = []
    for k in folds:
        fit_rows = train & (fold != k)
        eval_rows = train & (fold == k)
        if eval_rows.sum() < 2:
            continue
        p = fit_predict(args, x[fit_rows], y[fit_rows], x[eval_rows])
        scores.append(metrics(y[eval_rows], p)["r2"])
    if scores:
        print(f"{len(scores)}-fold CV R² (train ops): {np.mean(scores):.4f} ± "
              f"{np.std(scores, ddof=1) if len(scores) > 1 else 0:.4f}")

    start = time.perf_counter()
    forest = make_forest(args)
    forest.fit(x[train], y[train] if args.raw else np.log(y[train]))
    fit_s = time.perf_counter() - start
    for label, rows in (("test", test), ("held-out networks' ops", holdout)):
        if rows.sum() < 2:
            continue
        start = time.perf_counter()
        p = forest.predict(x[rows])
        predict_s = time.perf_counter() - start
        p = p if args.raw else np.exp(p)
        print(line(f"{label}, all modes", metrics(y[rows], p)))
        for m in sorted(set(mode[rows])):
            sel = mode[rows] == m
            if sel.sum() >= 2:
                print(line(f"{label}, {m}", metrics(y[rows][sel], p[sel])))
        print(f"  predict {int(rows.sum())} rows: {predict_s * 1e3:.1f} ms")
    print(f"fit on {int(train.sum())} rows: {fit_s:.2f} s")


if __name__ == "__main__":
    main()
