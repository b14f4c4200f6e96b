import { batchWrite, imageWrite, storedWrite, uploadWrite } from '../../lib/store/table/update-expression';

/** Every #name and :value the expressions use, found in the text. */
const used = (text: string, sigil: '#' | ':'): string[] => [...new Set(text.match(sigil === '#' ? /#\w+/g : /:\w+/g) ?? [])].sort();

describe('WriteExpression', () => {
  it('writes SET, if_not_exists, +, list_append, ADD, REMOVE and DELETE through placeholders', () => {
    const w = imageWrite();
    const out = w
      .set('status', ':processing', 'processing')
      .setIfNotExists('purgeAt', ':purge', 9)
      .increment('duplicates', ':one', 1)
      .append('labels', ':labels', ['Cat'])
      .add('duplicateFiles', ':name', new Set(['a.jpg']))
      .remove('leaseUntil', 'claimId')
      .delete('cats', ':gone', new Set(['x']))
      .update();
    expect(out.UpdateExpression).toBe(
      'SET #status = :processing, #purgeAt = if_not_exists(#purgeAt, :purge), #duplicates = #duplicates + :one, ' +
        '#labels = list_append(#labels, :labels) ADD #duplicateFiles :name REMOVE #leaseUntil, #claimId DELETE #cats :gone',
    );
    expect(out.ExpressionAttributeNames).toEqual({
      '#status': 'op_status',
      '#purgeAt': 'purge_at',
      '#duplicates': 'dup_count',
      '#labels': 'labels',
      '#duplicateFiles': 'dup_files',
      '#leaseUntil': 'lease_until',
      '#claimId': 'claim_id',
      '#cats': 'rek_cats',
    });
    expect(out.ExpressionAttributeValues).toEqual({
      ':processing': 'processing',
      ':purge': 9,
      ':one': 1,
      ':labels': ['Cat'],
      ':name': new Set(['a.jpg']),
      ':gone': new Set(['x']),
    });
    expect(out.ConditionExpression).toBeUndefined();
  });

  it('keeps the clauses in the order first used', () => {
    const w = uploadWrite();
    const out = w.add('attempts', ':one', 1).setIfNotExists('expiresAt', ':ttl', 5).update();
    expect(out.UpdateExpression).toBe('ADD #attempts :one SET #expiresAt = if_not_exists(#expiresAt, :ttl)');
  });

  it('sends every reserved word (ttl, status, count) through a name', () => {
    const w = storedWrite();
    const out = w.set('ttl', ':ttl', 1).set('status', ':s', 'x').add('count', ':one', 1).when(w.exists('ttl')).update();
    for (const word of ['ttl', 'status', 'count']) {
      expect(out.UpdateExpression).not.toMatch(new RegExp(`(^|[^#:\\w])${word}\\b`));
      expect(out.ExpressionAttributeNames?.[`#${word}`]).toBe(word);
    }
    expect(out.ConditionExpression).toBe('attribute_exists(#ttl)');
    // The batch's expiry is stored as ttl too: its domain name is the placeholder, never the word itself.
    expect(batchWrite().set('expiresAt', ':t', 1).update().ExpressionAttributeNames).toEqual({ '#expiresAt': 'ttl' });
  });

  it('sends only the names and values the expressions use', () => {
    const w = batchWrite();
    // Made and never used: it leaves nothing behind.
    w.is('closed', '=', ':unused', true);
    w.ifNotExists('debug', w.val(':alsoUnused', 1));
    const out = w
      .set('closed', ':true', true)
      .when(w.or(w.notExists('closed'), w.is('closed', '=', ':false', false)), w.compare('expected', '<=', 'total'))
      .update();
    const text = `${out.UpdateExpression} ${out.ConditionExpression}`;
    expect(Object.keys(out.ExpressionAttributeNames ?? {}).sort()).toEqual(used(text, '#'));
    expect(Object.keys(out.ExpressionAttributeValues ?? {}).sort()).toEqual(used(text, ':'));
    expect(out.ConditionExpression).toBe('(attribute_not_exists(#closed) OR #closed = :false) AND #expected <= #total');
  });

  it('leaves the values out entirely when the expressions use none', () => {
    const w = imageWrite();
    const out = w.remove('claimId').when(w.exists('fprint')).update();
    expect(out).toEqual({
      UpdateExpression: 'REMOVE #claimId',
      ConditionExpression: 'attribute_exists(#fprint)',
      ExpressionAttributeNames: { '#claimId': 'claim_id', '#fprint': 'img_fprint' },
    });
    expect('ExpressionAttributeValues' in out).toBe(false);
  });

  it('parenthesizes AND inside OR, OR inside AND, and either inside NOT; flattens the same kind', () => {
    const w = storedWrite();
    const limit = w.val(':limit', 3);
    const quota = w.or(w.and(w.notExists('accepted'), w.compare(limit, '>', w.val(':zero', 0))), w.compare('accepted', '<', limit));
    const out = w.when(w.not(w.contains('counting', w.val(':id', 'u1'))), quota).condition();
    expect(out.ConditionExpression).toBe(
      'NOT contains(#counting, :id) AND ((attribute_not_exists(#accepted) AND :limit > :zero) OR #accepted < :limit)',
    );
    const nested = storedWrite();
    const flat = nested.when(nested.and(nested.exists('a'), nested.exists('b')), nested.exists('c')).condition();
    expect(flat.ConditionExpression).toBe('attribute_exists(#a) AND attribute_exists(#b) AND attribute_exists(#c)');
    const negated = storedWrite();
    expect(negated.when(negated.not(negated.or(negated.exists('a'), negated.exists('b')))).condition().ConditionExpression).toBe(
      'NOT (attribute_exists(#a) OR attribute_exists(#b))',
    );
  });

  it('names a path into a map part by part, the parts inside as stored', () => {
    const w = batchWrite();
    const out = w
      .increment(['import', 'listed'], ':one', 1)
      .set(['import', 'state'], ':listed', 'listed')
      .when(w.exists('import'), w.is(['import', 'state'], '<>', ':listed', 'listed'))
      .update();
    expect(out.UpdateExpression).toBe('SET #import.#listed = #import.#listed + :one, #import.#state = :listed');
    expect(out.ConditionExpression).toBe('attribute_exists(#import) AND #import.#state <> :listed');
    expect(out.ExpressionAttributeNames).toEqual({ '#import': 'imp', '#listed': 'listed', '#state': 'state' });
  });

  it('gives two stored names with one placeholder each their own', () => {
    const w = storedWrite();
    const out = w.set(['a-b', 'x'], ':x', 1).set('a_b', ':y', 2).update();
    expect(out.UpdateExpression).toBe('SET #a_b.#x = :x, #a_b_2 = :y');
    expect(out.ExpressionAttributeNames).toEqual({ '#a_b': 'a-b', '#x': 'x', '#a_b_2': 'a_b' });
  });

  it('refuses an empty update, a condition-only request without a condition or with actions', () => {
    expect(() => imageWrite().update()).toThrow(/at least one action/);
    const w = imageWrite();
    expect(() => w.when(w.exists('fprint')).update()).toThrow(/at least one action/);
    expect(() => imageWrite().condition()).toThrow(/at least one condition/);
    expect(() => imageWrite().set('status', ':s', 'x').condition()).toThrow(/no update actions/);
  });

  it('refuses one label with two values, an undefined value, a bad label and an unknown attribute', () => {
    expect(() => imageWrite().set('status', ':v', 'a').set('reused', ':v', true).update()).toThrow(/:v given two values/);
    expect(imageWrite().set('width', ':n', 1).set('height', ':n', 1).update().ExpressionAttributeValues).toEqual({ ':n': 1 });
    expect(() => imageWrite().set('status', ':s', undefined).update()).toThrow(/No value for :s/);
    expect(() =>
      imageWrite()
        .set('status', ':s-1' as ':s', 'x')
        .update(),
    ).toThrow(/Not a value placeholder/);
    expect(() =>
      imageWrite()
        .remove('nope' as 'status')
        .update(),
    ).toThrow(/Unknown attribute: nope/);
  });
});
