// cfn-lint (1.51) over the compiled template. Errors fail; a warning passes only when it is kept below with the reason.
import { execFile } from 'node:child_process';

/** Warnings kept, each with why. */
export const KEPT_WARNINGS: Readonly<Record<string, string>> = {
  // osls writes `DependsOn: <integration>` on every HTTP API route that also names the integration in its Target: the
  // dependency is stated twice, which changes nothing CloudFormation does; the template is osls's output, not ours.
  W3005: 'osls states each route’s dependency on its integration twice (DependsOn and a Ref in Target); harmless',
};

export const CFN_LINT_INSTALL = 'pip install cfn-lint==1.51.0';

export interface LintFinding {
  Rule: { Id: string };
  Level: 'Error' | 'Warning' | 'Informational';
  Message: string;
  Location: { Path: (string | number)[] };
}

/** Runs cfn-lint on the template; answers its findings. */
export function cfnLint(templatePath: string): Promise<{ version: string; findings: LintFinding[] }> {
  return new Promise((resolve, reject) => {
    execFile('cfn-lint', ['--version'], (versionErr, versionOut) => {
      if (versionErr) return reject(new Error(`cfn-lint is not installed; install it with: ${CFN_LINT_INSTALL}`));
      execFile('cfn-lint', ['--format', 'json', '--', templatePath], { maxBuffer: 32 * 1024 * 1024 }, (err, stdout, stderr) => {
        // cfn-lint exits non-zero when it finds anything; its findings are on stdout either way.
        try {
          resolve({ version: versionOut.trim(), findings: JSON.parse(stdout || '[]') as LintFinding[] });
        } catch {
          reject(new Error(`cfn-lint failed: ${String(err)}\n${stderr}`));
        }
      });
    });
  });
}
