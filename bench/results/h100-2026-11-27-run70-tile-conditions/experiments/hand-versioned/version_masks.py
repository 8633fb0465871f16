# Experiment: version the attention mask loop on a tile-uniform test (hand edit of generated CUDA).
import re, sys
src, dst = sys.argv[1], sys.argv[2]
text = open(src).read()
lines = text.split('\n')
out = []
i = 0
count = 0
while i < len(lines):
    line = lines[i]
    m = re.match(r'(\s*)for \(int (tl_r\d+) = 0; \1?\s*tl_r\d+ < 64; \+\+tl_r\d+\) \{', line)
    if m and i + 8 < len(lines) and 'k_pos = ((k * 128) + j)' in '\n'.join(lines[i:i+9]) and 'scores[' in '\n'.join(lines[i:i+10]):
        indent, r = m.group(1), m.group(2)
        # the body ends at the first line equal to indent + '}'
        j = i + 1
        while lines[j] != indent + '}':
            j += 1
        body = '\n'.join(lines[i:j+1])
        qm = re.search(r'q_pos = \(\(bx \* (\d+)\) \+ i\)', body)
        causal = 'k_pos <= q_pos' in body
        test = '(((k * 128) + 127) < seq_len)'
        if causal:
            test += ' && (((k * 128) + 127) <= ((bx * %s) + 0))' % qm.group(1)
        # drop the '#pragma unroll' (and #line) already emitted before the for
        pragma = []
        while out and (out[-1].strip().startswith('#pragma unroll') or out[-1].startswith('#line')):
            pragma.insert(0, out.pop())
        out.append(indent + 'if (%s) {' % test)
        out.append(indent + '  #pragma unroll')
        out.append(indent + '  for (int %s = 0; %s < 64; ++%s) scores[%s] = 0.0f;' % (r, r, r, r))
        out.append(indent + '} else {')
        out.extend(pragma)
        out.extend(lines[i:j+1])
        out.append(indent + '}')
        i = j + 1
        count += 1
        continue
    out.append(line)
    i += 1
open(dst, 'w').write('\n'.join(out))
print(dst, count, 'loops versioned')
