import { useRef, useState } from 'preact/hooks';
import { chosenFiles, droppedFiles } from '../../upload';

interface FilePickerProps {
  running: boolean;
  onPicked: (picked: { name: string; file: File }[]) => void;
  onError: (error: unknown) => void;
}

/** Where files come from: dropped (a folder too), or chosen as images or as a folder. */
export function FilePicker({ running, onPicked, onError }: FilePickerProps) {
  const [over, setOver] = useState(false);
  const fileInput = useRef<HTMLInputElement>(null);
  const folderInput = useRef<HTMLInputElement>(null);

  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setOver(false);
    if (running || !e.dataTransfer) return;
    droppedFiles(e.dataTransfer).then(onPicked, onError);
  };

  const onChosen = (e: Event) => {
    const input = e.target as HTMLInputElement;
    if (input.files) onPicked(chosenFiles(input.files));
    input.value = '';
  };

  return (
    <div
      class={`dropzone${over ? ' over' : ''}`}
      data-testid="dropzone"
      onDragOver={(e) => {
        e.preventDefault();
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={onDrop}
    >
      <p>Drop images or a folder of images here, or</p>
      <div class="buttons">
        <button type="button" disabled={running} onClick={() => fileInput.current?.click()}>
          Choose images
        </button>
        <button type="button" disabled={running} onClick={() => folderInput.current?.click()}>
          Choose a folder
        </button>
      </div>
      <input
        ref={fileInput}
        id="file-input"
        class="visually-hidden"
        type="file"
        multiple
        // Phone photos by name too: some systems do not count .heic/.heif as image/* (docs/usage.md, "Phone photos").
        accept="image/*,.heic,.heif"
        tabIndex={-1}
        aria-label="Images to upload"
        onChange={onChosen}
      />
      <input
        ref={folderInput}
        class="visually-hidden"
        type="file"
        tabIndex={-1}
        aria-label="A folder to upload"
        {...{ webkitdirectory: true }}
        onChange={onChosen}
      />
    </div>
  );
}
