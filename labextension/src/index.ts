/**
 * Two plugins.
 *
 * @flashcourse/cuda-cells:plugin: highlight notebook code cells whose source
 * starts with the `%%cuda` cell magic as C++ (CodeMirror's cpp language, registered by JupyterLab as "C++",
 * mime text/x-c++src), and give them back the notebook's own mimetype
 * (from its kernel's language_info) once the magic is removed.
 *
 * The mimetype lives on the cell model only: it is not saved in the .ipynb
 * and does not mark the notebook dirty.
 *
 * @flashcourse/cuda-cells:validate-note: in CPU mode, nbgrader's Validate
 * success message ("Success! Your notebook passes all the tests.") gets a note
 * that the GPU checks were not run (see validateNote).
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import type { ICellModel } from '@jupyterlab/cells';
import { PageConfig } from '@jupyterlab/coreutils';
import { INotebookTracker, Notebook, NotebookPanel } from '@jupyterlab/notebook';
import type { IObservableList } from '@jupyterlab/observables';

const CUDA_MIME = 'text/x-c++src';
/** IPython strips leading blank lines and indentation before it looks for a cell magic. */
const CUDA_MAGIC = /^\s*%%cuda(\s|$)/;

function isCuda(source: string): boolean {
  return CUDA_MAGIC.test(source);
}

/** Watches the code cells of one notebook widget. */
function watchNotebook(notebook: Notebook): void {
  const seen = new WeakSet<ICellModel>();

  const apply = (cell: ICellModel): void => {
    if (cell.type !== 'code' || cell.isDisposed) {
      return;
    }
    const wanted = isCuda(cell.sharedModel.getSource())
      ? CUDA_MIME
      : notebook.codeMimetype;
    if (cell.mimeType !== wanted) {
      cell.mimeType = wanted;
    }
  };

  const watchCell = (cell: ICellModel): void => {
    if (cell.type !== 'code' || seen.has(cell)) {
      return;
    }
    seen.add(cell);
    cell.sharedModel.changed.connect((_, change) => {
      if (change.sourceChange) {
        apply(cell);
      }
    });
    // The notebook resets every code cell's mimetype when a cell is inserted
    // and when the kernel's language_info arrives: put C++ back afterwards.
    cell.mimeTypeChanged.connect(() => apply(cell));
    apply(cell);
  };

  const onCellsChanged = (
    _: unknown,
    change: IObservableList.IChangedArgs<ICellModel>
  ): void => {
    if (change.type === 'add' || change.type === 'set') {
      change.newValues.forEach(watchCell);
    }
  };

  const watchModel = (): void => {
    const model = notebook.model;
    if (!model) {
      return;
    }
    model.cells.changed.connect(onCellsChanged);
    for (let i = 0; i < model.cells.length; i++) {
      watchCell(model.cells.get(i));
    }
  };

  notebook.modelChanged.connect((_, __) => watchModel());
  watchModel();
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: '@flashcourse/cuda-cells:plugin',
  description: 'Highlight %%cuda notebook cells as CUDA C++.',
  autoStart: true,
  requires: [INotebookTracker],
  activate: (_app: JupyterFrontEnd, tracker: INotebookTracker): void => {
    const watch = (panel: NotebookPanel): void => watchNotebook(panel.content);
    tracker.forEach(watch);
    tracker.widgetAdded.connect((_, panel) => watch(panel));
  }
};

/**
 * The page config option that says the course's mode, "cpu" or "gpu": set by the
 * student view's server config (lab/student/jupyter_lab_config.py) from
 * course/mode.py's decision, made in the server's environment (the one the kernels,
 * Validate's included, inherit). Absent when the mode is not known.
 */
export const MODE_OPTION = 'flashcourseMode';

export const CPU_MODE_NOTE =
  'In CPU mode (no GPU on this machine) the speed checks and the CUDA checks ' +
  'that need a GPU were not run: this result does not include them. ' +
  'They are graded on a GPU.';

/** The note added to a successful Validate in this mode: only in CPU mode. */
export function validateNote(mode: string | null | undefined): string | null {
  return mode === 'cpu' ? CPU_MODE_NOTE : null;
}

const NOTE_CLASS = 'flashcourse-validate-note';

/**
 * Append the note to every nbgrader validation success message under root
 * (nbgrader's Validate dialog: #validation-message.validation-success, whose
 * class nbgrader sets only with its "Success! Your notebook passes all the
 * tests." text), once.
 */
export function addValidateNote(root: ParentNode, note: string): number {
  let added = 0;
  root
    .querySelectorAll<HTMLElement>('#validation-message.validation-success')
    .forEach(message => {
      if (message.querySelector(`.${NOTE_CLASS}`)) {
        return;
      }
      const p = document.createElement('p');
      p.className = NOTE_CLASS;
      p.textContent = note;
      const div = document.createElement('div'); // as nbgrader lays out its own text
      div.append(p);
      message.append(div);
      added++;
    });
  return added;
}

const validateNotePlugin: JupyterFrontEndPlugin<void> = {
  id: '@flashcourse/cuda-cells:validate-note',
  description:
    "In CPU mode, say in nbgrader's Validate success dialog that the GPU checks were not run.",
  autoStart: true,
  activate: (): void => {
    const note = validateNote(PageConfig.getOption(MODE_OPTION));
    if (!note) {
      return; // GPU mode, or not known: nothing is added
    }
    // nbgrader launches its dialog (a JupyterLab Dialog, message included) on
    // document.body, its default host: watching the body's own children is
    // enough (changes inside the page's widgets do not wake this observer).
    const observer = new MutationObserver(records => {
      for (const record of records) {
        record.addedNodes.forEach(node => {
          if (node instanceof HTMLElement) {
            addValidateNote(node, note);
          }
        });
      }
    });
    observer.observe(document.body, { childList: true });
  }
};

export default [plugin, validateNotePlugin];
