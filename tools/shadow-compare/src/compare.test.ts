import { describe, expect, it } from 'vitest';
import { actionLines, compareRuns, renderReport } from './compare.ts';

const APPLY = "['apply', 'privileged=False', 'c1', 'ns', 'ConfigMap', 'a']";
const DELETE = "['delete', 'privileged=False', 'c1', 'ns', 'Secret', \"it's\"]";

describe('actionLines', () => {
  it("reads the original's and our text log lines, nothing else", () => {
    const output = [
      `[2024-05-01 10:11:12] [INFO] [DRY-RUN] [openshift_base.py:apply:429] - ${APPLY}`,
      `[2026-11-29 09:00:00.000] [INFO] [DRY-RUN] [openshift-resources] - ${DELETE}`,
      `[2024-05-01 10:11:12] [INFO] [openshift_base.py:apply:429] - ['create', 'c1', 'ns']`,
      '[2024-05-01 10:11:12] [ERROR] [DRY-RUN] [x.py:f:1] - [c1/ns] resource is broken',
      "[2024-05-01 10:11:12] [INFO] [DRY-RUN] [x.py:f:1] - ['not', an action]",
      APPLY,
    ].join('\n');
    expect(actionLines(output)).toEqual([APPLY, DELETE, "['create', 'c1', 'ns']"]);
  });
});

describe('compareRuns', () => {
  it('order does not count, repeats and exit codes do', () => {
    expect(
      compareRuns(
        'x',
        { exitCode: 0, actions: [APPLY, DELETE] },
        { exitCode: 0, actions: [DELETE, APPLY] },
      ).identical,
    ).toBe(true);
    const c = compareRuns(
      'x',
      { exitCode: 0, actions: [APPLY, APPLY] },
      { exitCode: 1, actions: [APPLY, DELETE] },
    );
    expect(c).toMatchObject({ identical: false, onlyOriginal: [APPLY], onlyOurs: [DELETE] });
    expect(renderReport([c])).toBe(
      [
        'x: DIFFERENT',
        '  exit code: original 0, ours 1',
        `  only in the original: ${APPLY}`,
        `  only in ours:         ${DELETE}`,
        '1 integration(s) compared: 1 differ',
        '',
      ].join('\n'),
    );
  });
});
