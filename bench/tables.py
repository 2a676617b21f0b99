#!/usr/bin/env python3
"""Print the results a benchmark wrote with --json as markdown tables.

    build/venv/bin/python bench/tables.py RESULTS.json [MORE.json...]

One table per file, under a line saying which script made it, when, on
what commit and at what load (what bench/README.md says of each table).
A row per label (what was run), in the order first measured; a column
per value the script recorded (seconds, cpu, peak_mb...): the median of
the label's runs, with the number of runs when there were several.
Paste the output in place of the script's tables in bench/README.md.
"""

import argparse
import json
import sys
from pathlib import Path

UNITS = {'seconds': ('time', 's'), 'cpu': ('CPU', 's'),
         'serve_cpu': ('server CPU', 's'), 'peak_mb': ('peak', 'MB')}


def median(values):
    values = sorted(values)
    middle = len(values) // 2
    if len(values) % 2:
        return values[middle]
    return (values[middle - 1] + values[middle]) / 2


def number(value, unit):
    if isinstance(value, float):
        text = f'{value:.3f}' if abs(value) < 10 else f'{value:.1f}'
    else:
        text = f'{value:,}'
    return f'{text} {unit}'.strip()


def table(results):
    """The markdown lines of one results file."""
    runs = {}  # label -> [measurement]
    columns = []
    for measurement in results['measurements']:
        runs.setdefault(measurement['label'], []).append(measurement)
        columns += [k for k in measurement
                    if k != 'label' and k not in columns]
    lines = [f"`{results['script']}` {' '.join(results.get('argv', []))}"
             f"; measured {results['date']}"
             + (f", at {results['commit']}" if results.get('commit') else '')
             + f", load {results['load']:.1f}:", '']
    if not runs:
        return lines + ['(no measurements)']
    header = ['', *(UNITS.get(c, (c.replace('_', ' '),))[0]
                    for c in columns)]
    several = any(len(v) > 1 for v in runs.values())
    if several:
        header.append('runs')
    lines += ['| ' + ' | '.join(header) + ' |',
              '|' + '---|' * len(header)]
    for label, measured in runs.items():
        cells = [label]
        for column in columns:
            values = [m[column] for m in measured
                      if isinstance(m.get(column), (int, float))]
            unit = UNITS.get(column, ('', ''))[1]
            cells.append(number(median(values), unit) if values else '')
        if several:
            cells.append(str(len(measured)))
        lines.append('| ' + ' | '.join(cells) + ' |')
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('files', nargs='+', type=Path,
                        help='files written by a benchmark\'s --json')
    args = parser.parse_args()
    out = []
    for path in args.files:
        try:
            results = json.loads(path.read_text())
        except (OSError, ValueError) as e:
            print(f'fatal: {path}: {e}', file=sys.stderr)
            return 1
        if out:
            out.append('')
        out += table(results)
    print('\n'.join(out))
    return 0


if __name__ == '__main__':
    sys.exit(main())
