import { expect } from 'chai';
import { AnswerBatch } from '../../webhook/http/answer-batch.ts';

const connection = () => ({
  destroyed: false,
  destroy() {
    this.destroyed = true;
  },
});
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('webhook: answers decided in one turn are written together after it', () => {
  it('writes nothing during the turn, then every write of the turn, in the order added', async () => {
    const written: number[] = [];
    const batch = new AnswerBatch(() => expect.fail('no write throws'));
    for (let i = 0; i < 5; i++) batch.add(connection(), () => written.push(i));
    expect(written).to.deep.equal([]);
    await nextTurn();
    expect(written).to.deep.equal([0, 1, 2, 3, 4]);
  });

  it('a write added while a batch is written goes out in the next one', async () => {
    const written: string[] = [];
    const batch = new AnswerBatch(() => expect.fail('no write throws'));
    batch.add(connection(), () => {
      written.push('first');
      batch.add(connection(), () => written.push('later'));
    });
    await nextTurn();
    expect(written).to.deep.equal(['first']);
    await nextTurn();
    expect(written).to.deep.equal(['first', 'later']);
  });

  it('a write that throws destroys its connection and is reported; the others still go out', async () => {
    const errors: unknown[] = [];
    const written: number[] = [];
    const batch = new AnswerBatch((error) => errors.push(error));
    const broken = connection();
    const fine = connection();
    batch.add(fine, () => written.push(1));
    batch.add(broken, () => {
      throw new Error('socket gone');
    });
    batch.add(fine, () => written.push(3));
    await nextTurn();
    expect(written).to.deep.equal([1, 3]);
    expect(broken.destroyed).to.equal(true);
    expect(fine.destroyed).to.equal(false);
    expect(errors).to.have.length(1);
    expect((errors[0] as Error).message).to.equal('socket gone');
  });
});
