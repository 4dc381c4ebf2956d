import { expect } from 'chai';
import { compileCacheDir, enableCompileCache } from '../../cli/compile-cache.ts';
import { COMMANDS } from '../../cli/main.ts';
import { SHORT_RUN_V8_FLAGS, tuneForShortRun } from '../../cli/short-run.ts';

describe("the CLI's start: Node's compile cache and V8's settings for short runs", () => {
  it("the compile cache sits under the user's cache directory, or where NODE_COMPILE_CACHE says", () => {
    expect(compileCacheDir({ XDG_CACHE_HOME: '/x' })).to.equal('/x/staticsite/compile');
    expect(compileCacheDir({ HOME: '/h', XDG_CACHE_HOME: '' })).to.match(/\/\.cache\/staticsite\/compile$/);
    expect(compileCacheDir({ XDG_CACHE_HOME: '/x', NODE_COMPILE_CACHE: '/n' })).to.equal('/n');
    const opened: Array<string | undefined> = [];
    enableCompileCache((dir) => opened.push(dir), { XDG_CACHE_HOME: '/x' });
    expect(opened).to.deep.equal(['/x/staticsite/compile']);
  });

  it('a cache or a flag that cannot be set is no error', () => {
    const refuse = () => {
      throw new Error('EACCES');
    };
    expect(() => enableCompileCache(refuse)).not.to.throw();
    expect(() => enableCompileCache(undefined)).not.to.throw();
    expect(() => tuneForShortRun(refuse)).not.to.throw();
  });

  it('only validate runs with the short-run flags (a long-running process would keep their memory)', () => {
    const short = Object.entries(COMMANDS).filter(([, c]) => c.shortRun === true);
    expect(short.map(([name]) => name)).to.deep.equal(['validate']);
    const set: string[] = [];
    tuneForShortRun((flags) => set.push(flags));
    expect(set).to.deep.equal([SHORT_RUN_V8_FLAGS]);
    expect(SHORT_RUN_V8_FLAGS).to.include('--no-lazy');
  });
});
